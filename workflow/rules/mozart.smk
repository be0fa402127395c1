rule mozart_score:
    input:
        annotations="results/data/mozart/annotations.parquet",
        model=get_model_files,
    output:
        predictions="results/mozart/predictions/{model}/{lang}.parquet",
        answer_scores="results/mozart/answer_scores/{model}/{lang}.parquet",
    params:
        model=get_model_entry,
        top_k=config["mozart"]["top_k"],
        num_beams=get_mozart_num_beams,
        precision=get_model_precision("mozart"),
    log:
        "results/logs/mozart/score_{model}_{lang}.log",
    benchmark:
        "results/benchmarks/mozart/score_{model}_{lang}.tsv"
    threads: 4
    group:
        "score_{model}"
    resources:
        mem_mb=16000,
        runtime=120,
        gpu=get_model_gpus,
        token_budget=0,  # 0: the device's default (8192 on a CPU, 16384 on a GPU)
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/mozart_score.py"


rule mozart_metrics:
    input:
        annotations="results/data/mozart/annotations.parquet",
        predictions=get_mozart_run_files("predictions"),
        answer_scores=get_mozart_run_files("answer_scores"),
    output:
        metrics="results/mozart/metrics.parquet",
        annotation_scores="results/mozart/annotation_scores.parquet",
    params:
        runs=plan.mozart_runs(config),
    log:
        "results/logs/mozart/metrics.log",
    benchmark:
        "results/benchmarks/mozart/metrics.tsv"
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/mozart_metrics.py"


rule mozart_tables:
    input:
        metrics="results/mozart/metrics.parquet",
    output:
        tables=get_mozart_table_outputs(),
        disparity="results/tables/mozart_disparity.csv",
    params:
        files=get_mozart_table_files(),
        alpha=config["analysis"]["alpha"],
    log:
        "results/logs/tables/mozart.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/mozart_tables.py"


rule mozart_figure:
    input:
        metrics="results/mozart/metrics.parquet",
    output:
        png=report(
            "results/figures/mozart_mrr.png",
            caption="../report/mozart_mrr.rst",
            category="Cloze sets",
            subcategory="mozart",
            labels={"figure": "MRR per group and language"},
        ),
        pdf="results/figures/mozart_mrr.pdf",
    log:
        "results/logs/figures/mozart_mrr.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/mozart_figure.py"


rule mozart_table1:
    input:
        annotations="results/data/mozart/annotations.parquet",
        predictions=get_mozart_run_files("predictions"),
    output:
        csv="results/tables/mozart_table1.csv",
        md="results/tables/mozart_table1.md",
        tex="results/tables/mozart_table1.tex",
    log:
        "results/logs/tables/mozart_table1.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/mozart_table1.py"


# MozArt's appendix B: each model's top predictions for a few quadruples, in four languages,
# as last-layer vectors (a scoring job), then projected together by t-SNE and drawn.
rule mozart_tsne_vectors:
    input:
        annotations="results/data/mozart/annotations.parquet",
        model=get_model_files,
    output:
        vectors="results/mozart/tsne/{model}.parquet",
    params:
        model=get_model_entry,
        sentences=config["mozart"]["tsne"]["sentences"],
        top_k=config["mozart"]["tsne"]["top_k"],
        num_beams=get_mozart_num_beams,
        precision=get_model_precision("mozart"),
    log:
        "results/logs/mozart/tsne_{model}.log",
    benchmark:
        "results/benchmarks/mozart/tsne_{model}.tsv"
    threads: 4
    group:
        "score_{model}"
    resources:
        mem_mb=16000,
        runtime=120,
        gpu=get_model_gpus,
        token_budget=0,  # 0: the device's default (8192 on a CPU, 16384 on a GPU)
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/mozart_tsne_vectors.py"


rule mozart_tsne:
    input:
        vectors=get_mozart_tsne_vectors(),
    output:
        coordinates="results/mozart/tsne.parquet",
        png=report(
            "results/figures/mozart_tsne.png",
            caption="../report/mozart_tsne.rst",
            category="Cloze sets",
            subcategory="mozart",
            labels={"figure": "t-SNE of each model's top predictions"},
        ),
        pdf="results/figures/mozart_tsne.pdf",
    params:
        perplexity=config["mozart"]["tsne"]["perplexity"],
        seed=config["mozart"]["tsne"]["seed"],
    log:
        "results/logs/mozart/tsne.log",
    benchmark:
        "results/benchmarks/mozart/tsne.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/mozart_tsne.py"
