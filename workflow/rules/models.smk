rule build_tiny_model:
    input:
        corpus=get_tiny_model_corpus(),
    output:
        model=directory("resources/models/{built_model}"),
    params:
        build=get_tiny_model_build,
    log:
        "results/logs/models/build_{built_model}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/build_tiny_model.py"


rule model_manifest:
    localrule: True
    input:
        files=get_local_model_files,
    output:
        manifest="resources/manifests/{model}.json",
    params:
        folder=get_local_model_folder,
    log:
        "results/logs/models/manifest_{model}.log",
    resources:
        mem_mb=1000,
        runtime=30,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/model_manifest.py"


rule fetch_model:
    localrule: True
    output:
        model=directory("resources/models/{hub_model}"),
    params:
        hub=get_hub_model,
    log:
        "results/logs/models/fetch_{hub_model}.log",
    retries: 3
    resources:
        mem_mb=1000,
        runtime=120,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/fetch_model.py"


# Model metadata next to every score (XTREME-R): what the config says of each model that ran
# and what its scoring job read off the loaded weights (parameters, layers, vocabulary, ...).
rule models_table:
    localrule: True
    input:
        runs=list(get_model_run_files().values()),
    output:
        models="results/models.parquet",
        csv="results/tables/models.csv",
        md="results/tables/models.md",
        tex="results/tables/models.tex",
    log:
        "results/logs/tables/models.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/models_table.py"


# Every table of results/tables as HTML for the Snakemake report (`make report`), grouped by study.
rule report_tables:
    localrule: True
    input:
        get_final_outputs(),
    output:
        tables=report(
            directory("results/report_tables"),
            patterns=["{study}/{name}.html"],
            caption="../report/tables.rst",
            category="Tables",
            subcategory="{study}",
            labels={"table": "{name}"},
        ),
    log:
        "results/logs/tables/report_tables.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/report_tables.py"
