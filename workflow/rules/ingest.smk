rule ingest_mozart:
    input:
        archive=download(config["datasets"]["mozart"]) if plan.mozart_ingested(config) else [],
    output:
        annotations="results/data/mozart/annotations.parquet",
    params:
        languages=config["datasets"].get("mozart", {}).get("languages", []),
    log:
        "results/logs/ingest/mozart.log",
    resources:
        mem_mb=job_needs.mem_mb("ingest_mozart"),
        runtime=job_needs.runtime("ingest_mozart"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_mozart.py"


# A ready-made cloze test in MozArt's archive format (datasets.cloze_tests): read as MozArt's is.
rule ingest_cloze_test:
    input:
        archive=get_cloze_test_archive,
    output:
        annotations="results/data/{cloze_test}/annotations.parquet",
    params:
        languages=from_plan(plan.cloze_test_languages, "cloze_test"),
    log:
        "results/logs/ingest/{cloze_test}.log",
    resources:
        mem_mb=job_needs.mem_mb("ingest_cloze_test"),
        runtime=job_needs.runtime("ingest_cloze_test"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_mozart.py"


rule ingest_crows_pairs:
    input:
        unpack(get_crows_pairs_inputs),
    output:
        pairs="results/data/crows_pairs/{dataset}.parquet",
    params:
        reading=from_plan(plan.crows_pairs_reading, "dataset"),
    log:
        "results/logs/ingest/crows_pairs_{dataset}.log",
    resources:
        mem_mb=job_needs.mem_mb("ingest_crows_pairs"),
        runtime=job_needs.runtime("ingest_crows_pairs"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_crows_pairs.py"


rule data_summary:
    localrule: True
    input:
        mozart=INGESTED_MOZART,
        crows_pairs=list(INGESTED_CROWS_PAIRS.values()),
    output:
        summary="results/data/summary.parquet",
    params:
        crows_pairs=INGESTED_CROWS_PAIRS,
    log:
        "results/logs/ingest/data_summary.log",
    resources:
        mem_mb=job_needs.mem_mb("data_summary"),
        runtime=job_needs.runtime("data_summary"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/data_summary.py"


rule ingest:
    localrule: True
    input:
        "results/data/summary.parquet",
