# Results broken down by attributes of the examples (plmfair.breakdowns): cloze sets with
# answers ({cloze_set} = mozart or a constructed corpus) and the CrowS-Pairs runs; a heatmap of each.


rule cloze_breakdowns:
    input:
        scores="results/cloze/{cloze_set}/annotation_scores.parquet",
        annotations="results/data/{cloze_set}/annotations.parquet",
    output:
        breakdowns="results/cloze/{cloze_set}/breakdowns.parquet",
    log:
        "results/logs/cloze/{cloze_set}/breakdowns.log",
    resources:
        mem_mb=job_needs.mem_mb("cloze_breakdowns"),
        runtime=job_needs.runtime("cloze_breakdowns"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/cloze_breakdowns.py"


rule cloze_breakdown_figure:
    localrule: True
    input:
        breakdowns="results/cloze/{cloze_set}/breakdowns.parquet",
    output:
        png=report(
            "results/figures/{cloze_set}_breakdowns.png",
            caption="../report/cloze_breakdowns.rst",
            category=from_plan(plan.cloze_set_category, "cloze_set"),
            subcategory="Figures",
            labels={"figure": "MRR by attribute bucket and group"},
        ),
        pdf="results/figures/{cloze_set}_breakdowns.pdf",
    params:
        title="{cloze_set}: MRR over the top 5 (%) by attribute bucket, all languages",
    log:
        "results/logs/figures/{cloze_set}_breakdowns.log",
    resources:
        mem_mb=job_needs.mem_mb("cloze_breakdown_figure"),
        runtime=job_needs.runtime("cloze_breakdown_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/cloze_breakdown_figure.py"


rule crows_pairs_breakdowns:
    input:
        scores=crows_pairs_scores(plan.crows_pairs_jobs(config)),
        pairs=[plan.crows_pairs_data_file(ds) for ds in plan.crows_pairs_langs(config)],
    output:
        breakdowns="results/crows_pairs/breakdowns.parquet",
    params:
        runs=plan.crows_pairs_runs(plan.crows_pairs_jobs(config)),
        langs=plan.crows_pairs_langs(config),
    log:
        "results/logs/crows_pairs/breakdowns.log",
    resources:
        mem_mb=job_needs.mem_mb("crows_pairs_breakdowns"),
        runtime=job_needs.runtime("crows_pairs_breakdowns"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_breakdowns.py"


rule crows_pairs_breakdown_figure:
    localrule: True
    input:
        breakdowns="results/crows_pairs/breakdowns.parquet",
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
        mem_mb=job_needs.mem_mb("crows_pairs_breakdown_figure"),
        runtime=job_needs.runtime("crows_pairs_breakdown_figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_breakdown_figure.py"
