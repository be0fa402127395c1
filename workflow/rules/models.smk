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
