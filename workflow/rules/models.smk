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
