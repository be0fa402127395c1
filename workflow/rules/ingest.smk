# What every study shares: the data summary and the target that ingests every data set.


rule data_summary:
    localrule: True
    input:
        [path for files in DATA_SUMMARY_INPUTS.values() for path in files.values()],
    output:
        summary=plan.DATA_SUMMARY,
    params:
        studies=DATA_SUMMARY_INPUTS,
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
