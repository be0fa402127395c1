# Cloze sets filled by the models: MozArt's ({cloze_set} = mozart) and every constructed corpus
# ({cloze_set} = its name), one chain for both: each model scores every language of a set it
# covers in one job; a set with human answers gets MozArt's metrics, Tables 1-5 and Figure 1.


rule cloze_score:
    input:
        unpack(get_cloze_set_inputs),
        model="resources/manifests/{model}.json",
    output:
        predictions="results/cloze/{cloze_set}/predictions/{model}.parquet",
        answer_scores="results/cloze/{cloze_set}/answer_scores/{model}.parquet",
    params:
        model=from_plan(plan.model_loading, "model"),
        scoring=from_plan(plan.cloze_set_scoring, "cloze_set", "model"),
    log:
        "results/logs/cloze/{cloze_set}/score_{model}.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/score_{model}.tsv"
    threads: SCORING_THREADS
    group:
        "score_{model}"
    resources:
        **scoring_resources("cloze_score"),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/cloze_score.py"


rule cloze_metrics:
    input:
        annotations="results/data/{cloze_set}/annotations.parquet",
        predictions=get_cloze_set_scores("predictions"),
        answer_scores=get_cloze_set_scores("answer_scores"),
    output:
        metrics="results/cloze/{cloze_set}/metrics.parquet",
        annotation_scores="results/cloze/{cloze_set}/annotation_scores.parquet",
        overview="results/cloze/{cloze_set}/overview.parquet",
    params:
        runs=from_plan(plan.cloze_set_runs, "cloze_set"),
        coverage=config["coverage"],
    log:
        "results/logs/cloze/{cloze_set}/metrics.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/metrics.tsv"
    resources:
        mem_mb=job_needs.mem_mb("cloze_metrics"),
        runtime=job_needs.runtime("cloze_metrics"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/cloze_metrics.py"


rule cloze_mrr_figure:
    localrule: True
    input:
        metrics="results/cloze/{cloze_set}/metrics.parquet",
    output:
        png=report(
            "results/figures/{cloze_set}_mrr.png",
            caption="../report/mozart_mrr.rst",
            category=from_plan(plan.cloze_set_category, "cloze_set"),
            subcategory="Figures",
            labels={"figure": "MRR per group and language"},
        ),
        pdf="results/figures/{cloze_set}_mrr.pdf",
    log:
        "results/logs/figures/{cloze_set}_mrr.log",
    resources:
        mem_mb=job_needs.mem_mb("cloze_mrr_figure"),
        runtime=job_needs.runtime("cloze_mrr_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/cloze_mrr_figure.py"


# MozArt's appendix B, for each ready-made cloze test: each model's top predictions for a few
# quadruples, in every language, as last-layer vectors (a scoring job), then projected together by
# t-SNE and drawn.
rule tsne_vectors:
    input:
        annotations="results/data/{cloze_set}/annotations.parquet",
        model="resources/manifests/{model}.json",
    output:
        vectors="results/cloze/{cloze_set}/tsne/{model}.parquet",
    params:
        model=from_plan(plan.model_loading, "model"),
        sentences=config["mozart"]["tsne"]["sentences"],
        top_k=config["mozart"]["tsne"]["top_k"],
        num_beams=from_plan(plan.num_beams, "model", study="mozart"),
        precision=from_plan(plan.model_precision, "model", study="mozart"),
    log:
        "results/logs/cloze/{cloze_set}/tsne_{model}.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/tsne_{model}.tsv"
    threads: SCORING_THREADS
    group:
        "score_{model}"
    resources:
        **scoring_resources("tsne_vectors"),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/tsne_vectors.py"


rule tsne:
    input:
        vectors=get_tsne_vectors,
    output:
        coordinates="results/cloze/{cloze_set}/tsne.parquet",
        png=report(
            "results/figures/{cloze_set}_tsne.png",
            caption="../report/tsne.rst",
            category=from_plan(plan.cloze_set_category, "cloze_set"),
            subcategory="Figures",
            labels={"figure": "t-SNE of each model's top predictions"},
        ),
        pdf="results/figures/{cloze_set}_tsne.pdf",
    params:
        perplexity=config["mozart"]["tsne"]["perplexity"],
        seed=config["mozart"]["tsne"]["seed"],
    log:
        "results/logs/cloze/{cloze_set}/tsne.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/tsne.tsv"
    resources:
        mem_mb=job_needs.mem_mb("tsne"),
        runtime=job_needs.runtime("tsne"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/tsne.py"
