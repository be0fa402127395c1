# Cloze sets filled by the models, whichever study they belong to: MozArt's ready-made tests
# ({cloze_set} = mozart) and every constructed corpus ({cloze_set} = its name), one chain for all:
# each model scores every language of a set it covers in one job; a set with human answers gets
# MozArt's metrics, the tests of disparity between its annotator groups on the sentences they share,
# and its results broken down by attributes of the examples (plmfair.cloze.breakdowns). Their tables
# and figures (Tables 1-5 and Figure 1 among them) are the generic rules' (outputs.smk).
from plmfair.cloze import plan as cloze_plan


rule cloze_score:
    input:
        unpack(get_cloze_set_inputs),
        model=plan.MODEL_MANIFEST,
    output:
        predictions=cloze_plan.set_file("{cloze_set}", "predictions/{model}"),
        answer_scores=cloze_plan.set_file("{cloze_set}", "answer_scores/{model}"),
    params:
        model=from_plan(plan.model_loading, "model"),
        scoring=from_plan(cloze_plan.cloze_set_scoring, "cloze_set", "model"),
    log:
        "results/logs/cloze/{cloze_set}/score_{model}.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/score_{model}.tsv"
    threads: SCORING_THREADS
    group:
        "score_{model}"
    resources:
        **scoring_resources("cloze_score"),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/cloze_score.py"


rule cloze_metrics:
    input:
        annotations=cloze_plan.annotations_file("{cloze_set}"),
        predictions=get_cloze_set_scores("predictions"),
        answer_scores=get_cloze_set_scores("answer_scores"),
    output:
        metrics=cloze_plan.set_file("{cloze_set}", "metrics"),
        annotation_scores=cloze_plan.set_file("{cloze_set}", "annotation_scores"),
        overview=cloze_plan.set_file("{cloze_set}", "overview"),
    params:
        runs=from_plan(cloze_plan.cloze_set_runs, "cloze_set"),
        coverage=plan.setting(config, "coverage"),
    log:
        "results/logs/cloze/{cloze_set}/metrics.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/metrics.tsv"
    resources:
        **sized("cloze_metrics"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/cloze_metrics.py"


# The robustness analysis (robustness.enabled): the primary disparity verdict under each other metric and
# with each annotator left out (plmfair.cloze.robustness).
rule cloze_robustness:
    input:
        scores=cloze_plan.set_file("{cloze_set}", "annotation_scores"),
        # the confirmatory family's size sets the level a robust claim is held to
        hypotheses=plan.HYPOTHESES,
    output:
        specifications=cloze_plan.set_file("{cloze_set}", "robustness_specifications"),
        robustness=cloze_plan.set_file("{cloze_set}", "robustness"),
    params:
        alpha=plan.setting(config, "analysis.alpha"),
        permutations=plan.setting(config, "analysis.permutations"),
        seed=plan.setting(config, "analysis.seed"),
    log:
        "results/logs/cloze/{cloze_set}/robustness.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/robustness.tsv"
    resources:
        **sized("cloze_robustness"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/cloze_robustness.py"


rule group_analysis:
    input:
        scores=cloze_plan.set_file("{cloze_set}", "annotation_scores"),
    output:
        winloss=cloze_plan.set_file("{cloze_set}", "group_winloss"),
        gaps=cloze_plan.set_file("{cloze_set}", "group_gaps"),
        effects=cloze_plan.set_file("{cloze_set}", "group_effects"),
        tests=cloze_plan.set_file("{cloze_set}", "group_tests"),
        disparity=cloze_plan.set_file("{cloze_set}", "group_disparity"),
    params:
        alpha=plan.setting(config, "analysis.alpha"),
        reference_group=plan.setting(config, "analysis.reference_group"),
        permutations=plan.setting(config, "analysis.permutations"),
        seed=plan.setting(config, "analysis.seed"),
    log:
        "results/logs/cloze/{cloze_set}/group_analysis.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/group_analysis.tsv"
    resources:
        **sized("group_analysis"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/group_analysis.py"


rule cloze_breakdowns:
    input:
        scores=cloze_plan.set_file("{cloze_set}", "annotation_scores"),
        annotations=cloze_plan.annotations_file("{cloze_set}"),
    output:
        breakdowns=cloze_plan.set_file("{cloze_set}", "breakdowns"),
    log:
        "results/logs/cloze/{cloze_set}/breakdowns.log",
    resources:
        **sized("cloze_breakdowns"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/cloze_breakdowns.py"
