# What every study shares: the data summary and the target that ingests every data set.


rule data_summary:
    localrule: True
    input:
        cloze_tests=list(INGESTED_CLOZE_TESTS.values()),
        crows_pairs=list(INGESTED_CROWS_PAIRS.values()),
    output:
        summary=plan.DATA_SUMMARY,
    params:
        cloze_tests=INGESTED_CLOZE_TESTS,
        crows_pairs=INGESTED_CROWS_PAIRS,
    log:
        "results/logs/ingest/data_summary.log",
    resources:
        **sized("data_summary"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/data_summary.py"


rule ingest:
    localrule: True
    input:
        plan.DATA_SUMMARY,
