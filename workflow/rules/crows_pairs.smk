# CrowS-Pairs (study crows_pairs): each data set read into one Parquet row per pair, scored by each
# model, summarised with tests; data sets (languages) compared on the pairs they share; scores broken
# down by attributes of the pairs (plmfair.crows_pairs.breakdowns); a figure of each. Its paths are
# its plan's (plmfair.crows_pairs.plan).
from plmfair.crows_pairs import plan as crows_pairs_plan


rule ingest_crows_pairs:
    wildcard_constraints:
        dataset=CROWS_SET,
    input:
        unpack(get_crows_pairs_inputs),
    output:
        pairs=crows_pairs_plan.DATA,
    params:
        reading=from_plan(crows_pairs_plan.crows_pairs_reading, "dataset"),
    # ahead of the scoring jobs: a model's first scoring job scores its other data sets only once
    # they are ingested (plmfair.scoring.shared_load)
    priority: 10
    log:
        "results/logs/ingest/crows_pairs_{dataset}.log",
    resources:
        **sized("ingest_crows_pairs"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_crows_pairs.py"


rule crows_pairs_score:
    wildcard_constraints:
        dataset=CROWS_SET,
    input:
        pairs=crows_pairs_plan.DATA,
        model="results/manifests/{model}.json",
    output:
        scores=crows_pairs_plan.PAIR_SCORES,
    params:
        model=from_plan(plan.model_loading, "model"),
        protocol=from_plan(crows_pairs_plan.crows_pairs_protocol, "model"),
        precision=from_plan(plan.model_precision, "model", study="crows_pairs"),
        too_long=plan.setting(config, "crows_pairs.too_long"),
    log:
        "results/logs/crows_pairs/{dataset}/{model}.log",
    benchmark:
        "results/benchmarks/crows_pairs/{dataset}/{model}.tsv"
    threads: SCORING_THREADS
    group:
        "score_{model}"
    resources:
        **scoring_resources("crows_pairs_score"),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/crows_pairs_score.py"


rule crows_pairs_summary:
    input:
        scores=crows_pairs_scores(crows_pairs_plan.crows_pairs_jobs(config)),
    output:
        summary=crows_pairs_plan.SUMMARY,
        mcnemar=crows_pairs_plan.MCNEMAR,
    params:
        runs=crows_pairs_plan.crows_pairs_runs(crows_pairs_plan.crows_pairs_jobs(config)),
        langs=crows_pairs_plan.crows_pairs_langs(config),
        alpha=plan.setting(config, "analysis.alpha"),
        coverage=plan.setting(config, "coverage"),
    log:
        "results/logs/crows_pairs/summary.log",
    benchmark:
        "results/benchmarks/crows_pairs/summary.tsv"
    resources:
        **sized("crows_pairs_summary"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_summary.py"


rule crows_pairs_figure:
    localrule: True
    input:
        summary=crows_pairs_plan.SUMMARY,
        plan=plan.ANALYSIS_PLAN,
    output:
        png=report(
            "results/figures/crows_pairs.png",
            caption="../report/crows_pairs.rst",
            category=plan.figure_category("crows_pairs"),
            subcategory="Figures",
            labels={"figure": "score per bias type"},
        ),
        pdf="results/figures/crows_pairs.pdf",
    log:
        "results/logs/figures/crows_pairs.log",
    resources:
        **sized("crows_pairs_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_figure.py"


rule crows_pairs_languages:
    input:
        scores=crows_pairs_scores(crows_pairs_plan.crows_pairs_language_jobs(config)),
    output:
        winloss=crows_pairs_plan.LANGUAGE_WINLOSS,
        effects=crows_pairs_plan.LANGUAGE_EFFECTS,
    params:
        runs=crows_pairs_plan.crows_pairs_runs(crows_pairs_plan.crows_pairs_language_jobs(config)),
        langs=crows_pairs_plan.crows_pairs_langs(config),
        alpha=plan.setting(config, "analysis.alpha"),
    log:
        "results/logs/crows_pairs/languages.log",
    benchmark:
        "results/benchmarks/crows_pairs/languages.tsv"
    resources:
        **sized("crows_pairs_languages"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_languages.py"


rule crows_pairs_language_figure:
    localrule: True
    input:
        effects=crows_pairs_plan.LANGUAGE_EFFECTS,
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
        alpha=plan.setting(config, "analysis.alpha"),
    log:
        "results/logs/figures/crows_pairs_languages.log",
    resources:
        **sized("crows_pairs_language_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/effects_figure.py"


rule crows_pairs_breakdowns:
    input:
        scores=crows_pairs_scores(crows_pairs_plan.crows_pairs_jobs(config)),
        pairs=[crows_pairs_plan.crows_pairs_data_file(ds) for ds in crows_pairs_plan.crows_pairs_langs(config)],
    output:
        breakdowns=crows_pairs_plan.BREAKDOWNS,
    params:
        runs=crows_pairs_plan.crows_pairs_runs(crows_pairs_plan.crows_pairs_jobs(config)),
        langs=crows_pairs_plan.crows_pairs_langs(config),
    log:
        "results/logs/crows_pairs/breakdowns.log",
    resources:
        **sized("crows_pairs_breakdowns"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_breakdowns.py"


rule crows_pairs_breakdown_figure:
    localrule: True
    input:
        breakdowns=crows_pairs_plan.BREAKDOWNS,
    output:
        png=report(
            "results/figures/crows_pairs_breakdowns.png",
            caption="../report/crows_pairs_breakdowns.rst",
            category=plan.figure_category("crows_pairs_breakdowns"),
            subcategory="Figures",
            labels={"figure": "score by attribute bucket and model"},
        ),
        pdf="results/figures/crows_pairs_breakdowns.pdf",
    log:
        "results/logs/figures/crows_pairs_breakdowns.log",
    resources:
        **sized("crows_pairs_breakdown_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_breakdown_figure.py"
