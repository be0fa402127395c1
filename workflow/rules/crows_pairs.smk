# CrowS-Pairs (study crows_pairs): each data set read into one Parquet row per pair, scored by each
# model, summarised with tests; data sets (languages) compared on the pairs they share; scores broken
# down by attributes of the pairs (plmfair.crows_pairs.breakdowns). Its tables and figures are the
# generic rules' (outputs.smk); its paths are its plan's (plmfair.crows_pairs.plan).
from plmfair.crows_pairs import plan as crows_pairs_plan


rule ingest_crows_pairs:
    wildcard_constraints:
        dataset=CROWS_SET,
    input:
        unpack(get_crows_pairs_inputs),
    output:
        pairs=crows_pairs_plan.DATA,
    params:
        reading=from_plan(crows_pairs_plan.crows_pairs_reading, "dataset"),
    # ahead of the scoring jobs: a model's first scoring job scores its other data sets only once
    # they are ingested (plmfair.scoring.shared_load)
    priority: 10
    log:
        "results/logs/ingest/crows_pairs_{dataset}.log",
    resources:
        **sized("ingest_crows_pairs"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_crows_pairs.py"


rule crows_pairs_score:
    wildcard_constraints:
        dataset=CROWS_SET,
    input:
        pairs=crows_pairs_plan.DATA,
        model=plan.MODEL_MANIFEST,
    output:
        scores=crows_pairs_plan.PAIR_SCORES,
    params:
        model=from_plan(plan.model_loading, "model"),
        protocol=from_plan(crows_pairs_plan.crows_pairs_protocol, "model"),
        precision=from_plan(plan.model_precision, "model", study="crows_pairs"),
        too_long=plan.setting(config, "crows_pairs.too_long"),
        unknown_tokens=plan.setting(config, "crows_pairs.unknown_tokens"),
    log:
        "results/logs/crows_pairs/{dataset}/{model}.log",
    benchmark:
        "results/benchmarks/crows_pairs/{dataset}/{model}.tsv"
    threads: SCORING_THREADS
    group:
        "score_{model}"
    resources:
        **scoring_resources("crows_pairs_score"),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/crows_pairs_score.py"


# the per-pair scores read once for the verdicts, the McNemar tests and the breakdowns by attribute
rule crows_pairs_summary:
    input:
        scores=crows_pairs_scores(crows_pairs_plan.crows_pairs_jobs(config)),
        pairs=[crows_pairs_plan.crows_pairs_data_file(ds) for ds in crows_pairs_plan.crows_pairs_langs(config)],
    output:
        summary=crows_pairs_plan.SUMMARY,
        mcnemar=crows_pairs_plan.MCNEMAR,
        breakdowns=crows_pairs_plan.BREAKDOWNS,
    params:
        runs=crows_pairs_plan.crows_pairs_runs(crows_pairs_plan.crows_pairs_jobs(config)),
        langs=crows_pairs_plan.crows_pairs_langs(config),
        # (the inputs above make the job wait for these files; the script reads them by data set)
        pairs={ds: crows_pairs_plan.crows_pairs_data_file(ds) for ds in crows_pairs_plan.crows_pairs_langs(config)},
        alpha=plan.setting(config, "analysis.alpha"),
        coverage=plan.setting(config, "coverage"),
    log:
        "results/logs/crows_pairs/summary.log",
    benchmark:
        "results/benchmarks/crows_pairs/summary.tsv"
    resources:
        **sized("crows_pairs_summary"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_summary.py"


rule crows_pairs_languages:
    input:
        scores=crows_pairs_scores(crows_pairs_plan.crows_pairs_language_jobs(config)),
    output:
        winloss=crows_pairs_plan.LANGUAGE_WINLOSS,
        effects=crows_pairs_plan.LANGUAGE_EFFECTS,
    params:
        runs=crows_pairs_plan.crows_pairs_runs(crows_pairs_plan.crows_pairs_language_jobs(config)),
        langs=crows_pairs_plan.crows_pairs_langs(config),
        alpha=plan.setting(config, "analysis.alpha"),
    log:
        "results/logs/crows_pairs/languages.log",
    benchmark:
        "results/benchmarks/crows_pairs/languages.tsv"
    resources:
        **sized("crows_pairs_languages"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_languages.py"


# The robustness analysis (robustness.enabled): each model scores each data set under the other protocols its
# family allows and, when it runs in reduced precision, in fp32, as tasks of the same load as its own scoring
# (plmfair.crows_pairs.model_tasks); then each verdict is computed again under every choice
# (plmfair.crows_pairs.robustness).
# One job per model and data set makes all the model's extra passes: a rule per group of models with the same
# passes (crows_pairs_plan.pass_groups), crows_pairs_pass_score for the first, crows_pairs_pass_score_2 ... for
# the others.
for index, (passes, pass_models) in enumerate(crows_pairs_plan.pass_groups(config).items()):

    rule:
        name:
            "crows_pairs_pass_score" + (f"_{index + 1}" if index else "")
        wildcard_constraints:
            dataset=CROWS_SET,
            model=_alternatives(pass_models),
        input:
            pairs=crows_pairs_plan.DATA,
            model=plan.MODEL_MANIFEST,
        output:
            scores=[crows_pairs_plan.pass_scores_file("{dataset}", "{model}", *p) for p in passes],
        params:
            model=from_plan(plan.model_loading, "model"),
            precision=from_plan(plan.model_precision, "model", study="crows_pairs"),
            too_long=plan.setting(config, "crows_pairs.too_long"),
            unknown_tokens=plan.setting(config, "crows_pairs.unknown_tokens"),
            passes=[list(p) for p in passes],
        log:
            "results/logs/crows_pairs/{dataset}/passes/{model}.log",
        benchmark:
            "results/benchmarks/crows_pairs/{dataset}/passes/{model}.tsv"
        threads: SCORING_THREADS
        group:
            "score_{model}"
        resources:
            **scoring_resources("crows_pairs_pass_score"),
        conda:
            "../../envs/models.yaml"
        script:
            "../scripts/crows_pairs_pass_score.py"


rule crows_pairs_robustness:
    input:
        scores=robustness_inputs(crows_pairs_plan.robustness_runs(config)),
        exclusions=exclusions_input(config),
        # the confirmatory family's size sets the level a robust claim is held to
        hypotheses=plan.HYPOTHESES,
    output:
        specifications=crows_pairs_plan.SPECIFICATIONS,
        robustness=crows_pairs_plan.ROBUSTNESS,
        ranking=crows_pairs_plan.RANKING,
    params:
        runs=crows_pairs_plan.robustness_runs(config),
        versions=crows_pairs_plan.data_versions(config),
        langs=crows_pairs_plan.crows_pairs_langs(config),
        ties=plan.setting(config, "crows_pairs.robustness.ties"),
        alpha=plan.setting(config, "analysis.alpha"),
        max_grid=plan.setting(config, "robustness.max_grid"),
        bootstrap=plan.setting(config, "robustness.bootstrap"),
        seed=plan.setting(config, "analysis.seed"),
    log:
        "results/logs/crows_pairs/robustness.log",
    benchmark:
        "results/benchmarks/crows_pairs/robustness.tsv"
    resources:
        **sized("crows_pairs_robustness"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/crows_pairs_robustness.py"
