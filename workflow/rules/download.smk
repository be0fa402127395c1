rule download:
    localrule: True
    output:
        # the run's own link to the shared store's file (plmfair.plan.DOWNLOADED)
        file=plan.DOWNLOADED,
    params:
        source=from_plan(plan.download_source, "file"),
        # a file kept without a checksum is read again when its mirror copy changes
        unverified_copy=unverified_mirror_copy,
    # ahead of the scoring jobs: a model's first scoring job scores its other data sets only once
    # they are ingested (plmfair.scoring.shared_load)
    priority: 10
    log:
        "results/logs/download/{file}.log",
    retries: 3
    resources:
        **sized("download"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/download.py"
