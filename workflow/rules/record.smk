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
