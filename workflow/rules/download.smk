rule download:
    localrule: True
    output:
        file="resources/downloads/{file}",
    params:
        url=get_download_url,
        sha256=get_download_sha256,
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
