# The run's hypotheses (plmfair.runs.hypotheses): every test a table or figure marks, from each study's
# result files, in the confirmatory family (the studies' primary questions, Holm) or the secondary one
# (Benjamini-Yekutieli over the whole report); the tables, figures and the record read their marks from it.


rule hypotheses:
    localrule: True
    input:
        unpack(get_hypothesis_files),
    output:
        hypotheses=plan.HYPOTHESES,
    params:
        files=plan.hypothesis_files(config),
        alpha=plan.setting(config, "analysis.alpha"),
    log:
        "results/logs/hypotheses.log",
    benchmark:
        "results/benchmarks/hypotheses.tsv"
    resources:
        **sized("hypotheses"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/hypotheses.py"
