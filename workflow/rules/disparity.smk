# Tests of disparity: annotator groups compared on the sentences they share (MozArt and
# constructed sets with answers, {cloze_set} = mozart or cloze/<corpus>, named
# {set_name} = mozart or cloze_<corpus> in tables and figures), and CrowS-Pairs data sets
# (languages) compared on the pairs they share.


rule group_analysis:
    input:
        scores="results/{cloze_set}/annotation_scores.parquet",
    output:
        winloss="results/{cloze_set}/group_winloss.parquet",
        effects="results/{cloze_set}/group_effects.parquet",
    params:
        alpha=config["analysis"]["alpha"],
        reference_group=config["analysis"]["reference_group"],
        annotator_variance=config["analysis"]["annotator_variance"],
    log:
        "results/logs/{cloze_set}/group_analysis.log",
    benchmark:
        "results/benchmarks/{cloze_set}/group_analysis.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/group_analysis.py"


rule group_tables:
    input:
        unpack(get_group_analysis_files),
    output:
        winloss_csv="results/tables/{set_name}_group_winloss.csv",
        winloss_md="results/tables/{set_name}_group_winloss.md",
        winloss_tex="results/tables/{set_name}_group_winloss.tex",
        effects_csv="results/tables/{set_name}_group_effects.csv",
        effects_md="results/tables/{set_name}_group_effects.md",
        effects_tex="results/tables/{set_name}_group_effects.tex",
    params:
        conditions="group",
        examples="sentences",
        label="{set_name}_group",
        alpha=config["analysis"]["alpha"],
    log:
        "results/logs/tables/{set_name}_group.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/analysis_tables.py"


rule group_figure:
    input:
        unpack(get_group_analysis_files),
    output:
        png=report(
            "results/figures/{set_name}_group_effects.png",
            caption="../report/group_effects.rst",
            category="Cloze sets",
            subcategory="{set_name}",
            labels={"figure": "group effects"},
        ),
        pdf="results/figures/{set_name}_group_effects.pdf",
    params:
        title="{set_name}: annotator groups against the reference group",
        alpha=config["analysis"]["alpha"],
    log:
        "results/logs/figures/{set_name}_group_effects.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/effects_figure.py"


rule crows_pairs_languages:
    input:
        scores=get_crows_pairs_language_scores(),
    output:
        winloss="results/crows_pairs/language_winloss.parquet",
        effects="results/crows_pairs/language_effects.parquet",
    params:
        jobs=plan.crows_pairs_language_jobs(config),
        langs={name: entry["lang"] for name, entry in CROWS_SETS.items()},
        alpha=config["analysis"]["alpha"],
    log:
        "results/logs/crows_pairs/languages.log",
    benchmark:
        "results/benchmarks/crows_pairs/languages.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_languages.py"


rule crows_pairs_language_tables:
    input:
        winloss="results/crows_pairs/language_winloss.parquet",
        effects="results/crows_pairs/language_effects.parquet",
    output:
        winloss_csv="results/tables/crows_pairs_language_winloss.csv",
        winloss_md="results/tables/crows_pairs_language_winloss.md",
        winloss_tex="results/tables/crows_pairs_language_winloss.tex",
        effects_csv="results/tables/crows_pairs_language_effects.csv",
        effects_md="results/tables/crows_pairs_language_effects.md",
        effects_tex="results/tables/crows_pairs_language_effects.tex",
    params:
        conditions="dataset",
        examples="pairs",
        label="crows_pairs_language",
        alpha=config["analysis"]["alpha"],
    log:
        "results/logs/tables/crows_pairs_languages.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/analysis_tables.py"


rule crows_pairs_language_figure:
    input:
        effects="results/crows_pairs/language_effects.parquet",
    output:
        png=report(
            "results/figures/crows_pairs_language_effects.png",
            caption="../report/crows_pairs_languages.rst",
            category="CrowS-Pairs",
            labels={"figure": "languages compared on shared pairs"},
        ),
        pdf="results/figures/crows_pairs_language_effects.pdf",
    params:
        title="CrowS-Pairs: score margin of each data set against the first",
        alpha=config["analysis"]["alpha"],
    log:
        "results/logs/figures/crows_pairs_languages.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/effects_figure.py"
