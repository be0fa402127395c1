# A ready-made cloze test in MozArt's archive format (datasets.cloze_tests; MozArt's own is one).
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
        "../scripts/ingest_cloze_test.py"


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
        cloze_tests=list(INGESTED_CLOZE_TESTS.values()),
        crows_pairs=list(INGESTED_CROWS_PAIRS.values()),
    output:
        summary="results/data/summary.parquet",
    params:
        cloze_tests=INGESTED_CLOZE_TESTS,
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
