rule download:
    localrule: True
    output:
        file="resources/downloads/{file}",
    params:
        source=from_plan(plan.download_source, "file"),
    log:
        "results/logs/download/{file}.log",
    retries: 3
    resources:
        mem_mb=500,
        runtime=30,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/download.py"
