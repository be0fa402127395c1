# The run's analysis plan (plmfair.runs.analysis_plan): every test a table or figure marks, from each study's
# result files, in the confirmatory family (the studies' primary questions, Holm) or the secondary one
# (Benjamini-Yekutieli over the whole report); the tables, figures and the record read their marks from it.


rule analysis_plan:
    localrule: True
    input:
        unpack(get_analysis_plan_inputs),
    output:
        plan=plan.ANALYSIS_PLAN,
    params:
        files=plan.analysis_plan_inputs(config),
        alpha=plan.setting(config, "analysis.alpha"),
    log:
        "results/logs/analysis_plan.log",
    benchmark:
        "results/benchmarks/analysis_plan.tsv"
    resources:
        **sized("analysis_plan"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/analysis_plan.py"


# The run's results record (plmfair.runs.record): what to cite a number with. Its inputs are the results it
# summarises, so it is never older than they are; the configuration it echoes is a param, so a change of
# setting rewrites it (a change that alters no result reruns this job alone).


rule run_record:
    localrule: True
    input:
        unpack(get_run_record_inputs),
    output:
        record=plan.RUN_RECORD,
        html=report(
            plan.RUN_RECORD_HTML,
            caption="../report/run_record.rst",
            category=plan.report_category("data"),
            subcategory="Run record",
            labels={"record": plan.RUN_RECORD},
        ),
    params:
        config=plan.recorded_config(config),
        studies=plan.recorded_files(config),
        pinned=plan.pinned_checksums(config),
    log:
        "results/logs/run_record.log",
    resources:
        **sized("run_record"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/run_record.py"
