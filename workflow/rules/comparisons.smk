# Tests of disparity: annotator groups compared on the sentences they share (every cloze set
# with answers: {cloze_set} = mozart or a constructed corpus), and CrowS-Pairs data sets
# (languages) compared on the pairs they share.


rule group_analysis:
    input:
        scores="results/cloze/{cloze_set}/annotation_scores.parquet",
    output:
        winloss="results/cloze/{cloze_set}/group_winloss.parquet",
        gaps="results/cloze/{cloze_set}/group_gaps.parquet",
        effects="results/cloze/{cloze_set}/group_effects.parquet",
        tests="results/cloze/{cloze_set}/group_tests.parquet",
        disparity="results/cloze/{cloze_set}/group_disparity.parquet",
    params:
        alpha=config["analysis"]["alpha"],
        reference_group=config["analysis"]["reference_group"],
        permutations=config["analysis"]["permutations"],
        bootstrap=config["analysis"]["bootstrap"],
        seed=config["analysis"]["seed"],
    log:
        "results/logs/cloze/{cloze_set}/group_analysis.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/group_analysis.tsv"
    resources:
        mem_mb=job_needs.mem_mb("group_analysis"),
        runtime=job_needs.runtime("group_analysis"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/group_analysis.py"


rule group_figure:
    localrule: True
    input:
        effects="results/cloze/{cloze_set}/group_gaps.parquet",
    output:
        png=report(
            "results/figures/{cloze_set}_group_effects.png",
            caption="../report/group_effects.rst",
            category=from_plan(plan.cloze_set_category, "cloze_set"),
            subcategory="Figures",
            labels={"figure": "group effects"},
        ),
        pdf="results/figures/{cloze_set}_group_effects.pdf",
    params:
        title="{cloze_set}: each annotator group's gap to the reference group",
    log:
        "results/logs/figures/{cloze_set}_group_effects.log",
    resources:
        mem_mb=job_needs.mem_mb("group_figure"),
        runtime=job_needs.runtime("group_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/effects_figure.py"


rule crows_pairs_languages:
    input:
        scores=crows_pairs_scores(plan.crows_pairs_language_jobs(config)),
    output:
        winloss="results/crows_pairs/language_winloss.parquet",
        effects="results/crows_pairs/language_effects.parquet",
    params:
        runs=plan.crows_pairs_runs(plan.crows_pairs_language_jobs(config)),
        langs=plan.crows_pairs_langs(config),
        alpha=config["analysis"]["alpha"],
    log:
        "results/logs/crows_pairs/languages.log",
    benchmark:
        "results/benchmarks/crows_pairs/languages.tsv"
    resources:
        mem_mb=job_needs.mem_mb("crows_pairs_languages"),
        runtime=job_needs.runtime("crows_pairs_languages"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_languages.py"


rule crows_pairs_language_figure:
    localrule: True
    input:
        effects="results/crows_pairs/language_effects.parquet",
    output:
        png=report(
            "results/figures/crows_pairs_language_effects.png",
            caption="../report/crows_pairs_languages.rst",
            category=plan.figure_category("crows_pairs_language_effects"),
            subcategory="Figures",
            labels={"figure": "languages compared on shared pairs"},
        ),
        pdf="results/figures/crows_pairs_language_effects.pdf",
    params:
        title="CrowS-Pairs: score margin of each data set against the first",
    log:
        "results/logs/figures/crows_pairs_languages.log",
    resources:
        mem_mb=job_needs.mem_mb("crows_pairs_language_figure"),
        runtime=job_needs.runtime("crows_pairs_language_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/effects_figure.py"
