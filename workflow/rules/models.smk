rule build_tiny_model:
    input:
        # the demo text a tiny model's tokenizer is trained on, and the answers it learns to fill
        # gaps with: every ingested sentence, the ready-made cloze tests' and the constructed sets' answers
        corpus=plan.ingested_texts(config),
    output:
        model=directory("results/models/{built_model}"),
        # its manifest too (model_manifest makes the others'): one job fewer per built model
        manifest=plan.MODEL_MANIFEST.replace("{model}", "{built_model}"),
    params:
        build=from_plan(plan.tiny_model_build, "built_model"),
    log:
        "results/logs/models/build_{built_model}.log",
    resources:
        **sized("build_tiny_model"),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/build_tiny_model.py"


# Every model is an input of its jobs through the manifest of its folder's files, so replacing its
# weights (or fetching another commit) reruns exactly its jobs. The manifest is the run's own
# (results/), so another run that gives the name to other weights never touches this run's jobs.
rule model_manifest:
    localrule: True
    wildcard_constraints:
        model=_alternatives(set(MODEL_SPECS) - set(plan.built_models(config))),
    input:
        files=get_local_model_files,
    output:
        manifest=plan.MODEL_MANIFEST,
    params:
        folder=from_plan(plan.model_folder, "model"),
    log:
        "results/logs/models/manifest_{model}.log",
    resources:
        **sized("model_manifest"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/model_manifest.py"


rule fetch_model:
    localrule: True
    output:
        # the run's own folder of hard links into the Hub cache (plmfair.plan.hub_store)
        model=directory("results/models/{hub_model}"),
    params:
        hub=from_plan(plan.hub_fetch, "hub_model"),
    log:
        "results/logs/models/fetch_{hub_model}.log",
    retries: 3
    resources:
        **sized("fetch_model"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/fetch_model.py"


# Model metadata next to every score (XTREME-R): what each model's first scoring job read off the
# loaded weights (parameters, layers, vocabulary, ...) and the languages the config gives it.
rule models:
    localrule: True
    input:
        runs=list(get_model_run_files().values()),
    output:
        models=plan.MODELS_TABLE,
    params:
        # (the inputs above make the job wait for these files; the script reads them by model)
        runs=get_model_run_files(),
        languages=plan.model_languages(config),
    log:
        "results/logs/models/models.log",
    resources:
        **sized("models"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/models.py"
