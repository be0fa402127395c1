rule crows_pairs_score:
    input:
        pairs="results/data/crows_pairs/{dataset}.parquet",
        model=get_model_files,
    output:
        scores="results/crows_pairs/{dataset}/{model}.parquet",
    params:
        model=get_model_entry,
        protocol=get_crows_pairs_protocol,
        precision=get_model_precision("crows_pairs"),
        too_long=config["crows_pairs"]["too_long"],
    log:
        "results/logs/crows_pairs/{dataset}/{model}.log",
    benchmark:
        "results/benchmarks/crows_pairs/{dataset}/{model}.tsv"
    threads: 8
    group:
        "score_{model}"
    resources:
        mem_mb=16000,
        runtime=120,
        gpu=get_model_gpus,
        # on SLURM: CPUs for tokenisation and torch's host work beside each GPU (the job's threads)
        cpus_per_gpu=8,
        # Tokens per forward pass (batch size x padded length); raise it on a large GPU.
        token_budget=0,  # 0: the device's default (8192 on a CPU, 16384 on a GPU)
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/crows_pairs_score.py"


rule crows_pairs_summary:
    input:
        scores=get_crows_pairs_scores(),
    output:
        summary="results/crows_pairs/summary.parquet",
        mcnemar="results/crows_pairs/mcnemar.parquet",
    params:
        jobs=plan.crows_pairs_jobs(config),
        langs={name: entry["lang"] for name, entry in CROWS_SETS.items()},
        alpha=config["crows_pairs"]["alpha"],
    log:
        "results/logs/crows_pairs/summary.log",
    benchmark:
        "results/benchmarks/crows_pairs/summary.tsv"
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_summary.py"


rule crows_pairs_tables:
    localrule: True
    input:
        summary="results/crows_pairs/summary.parquet",
        mcnemar="results/crows_pairs/mcnemar.parquet",
    output:
        table4_csv="results/tables/crows_pairs.csv",
        table4_md="results/tables/crows_pairs.md",
        table4_tex="results/tables/crows_pairs.tex",
        table5_csv="results/tables/crows_pairs_origin.csv",
        table5_md="results/tables/crows_pairs_origin.md",
        table5_tex="results/tables/crows_pairs_origin.tex",
        mcnemar_csv="results/tables/crows_pairs_mcnemar.csv",
    log:
        "results/logs/tables/crows_pairs.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_tables.py"


rule crows_pairs_figure:
    localrule: True
    input:
        summary="results/crows_pairs/summary.parquet",
    output:
        png=report(
            "results/figures/crows_pairs.png",
            caption="../report/crows_pairs.rst",
            category="CrowS-Pairs",
            labels={"figure": "score per bias type"},
        ),
        pdf="results/figures/crows_pairs.pdf",
    log:
        "results/logs/figures/crows_pairs.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_figure.py"
