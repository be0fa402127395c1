rule crows_pairs_score:
    input:
        pairs="results/data/crows_pairs/{dataset}.parquet",
        model="resources/manifests/{model}.json",
    output:
        scores="results/crows_pairs/{dataset}/{model}.parquet",
    params:
        model=from_plan(plan.model_loading, "model"),
        protocol=from_plan(plan.crows_pairs_protocol, "model"),
        precision=from_plan(plan.model_precision, "model", study="crows_pairs"),
        too_long=config["crows_pairs"]["too_long"],
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
        scores=crows_pairs_scores(plan.crows_pairs_jobs(config)),
    output:
        summary="results/crows_pairs/summary.parquet",
        mcnemar="results/crows_pairs/mcnemar.parquet",
    params:
        runs=plan.crows_pairs_runs(plan.crows_pairs_jobs(config)),
        langs=plan.crows_pairs_langs(config),
        alpha=config["crows_pairs"]["alpha"],
        coverage=config["coverage"],
    log:
        "results/logs/crows_pairs/summary.log",
    benchmark:
        "results/benchmarks/crows_pairs/summary.tsv"
    resources:
        mem_mb=job_needs.mem_mb("crows_pairs_summary"),
        runtime=job_needs.runtime("crows_pairs_summary"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_summary.py"


rule crows_pairs_figure:
    localrule: True
    input:
        summary="results/crows_pairs/summary.parquet",
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
        mem_mb=job_needs.mem_mb("crows_pairs_figure"),
        runtime=job_needs.runtime("crows_pairs_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_figure.py"
