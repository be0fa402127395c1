rule ingest_mozart:
    input:
        archive=get_mozart_archive(),
    output:
        annotations="results/data/mozart/annotations.parquet",
    params:
        languages=config["datasets"].get("mozart", {}).get("languages", []),
    log:
        "results/logs/ingest/mozart.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_mozart.py"


rule ingest_crows_pairs:
    input:
        raw=get_crows_pairs_raw,
        reference=get_crows_pairs_reference,
    output:
        pairs="results/data/crows_pairs/{dataset}.parquet",
    params:
        reading=get_crows_pairs_format,
    log:
        "results/logs/ingest/crows_pairs_{dataset}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_crows_pairs.py"


rule data_summary:
    localrule: True
    input:
        mozart=get_mozart_annotations(),
        crows_pairs=list(get_ingested_crows_pairs().values()),
    output:
        csv="results/tables/data_summary.csv",
    params:
        crows_pairs=list(get_ingested_crows_pairs()),
    log:
        "results/logs/tables/data_summary.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/data_summary.py"


rule ingest:
    localrule: True
    input:
        get_ingest_outputs(),
