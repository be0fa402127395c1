# MozArt (study mozart): ready-made cloze tests in MozArt's archive format (datasets.cloze_tests;
# MozArt's own is one), ingested; their cloze-set chain is cloze_sets.smk; the t-SNE maps of the
# predictions (appendix B) for the tests mozart.tsne.sets names.
from plmfair.cloze import plan as cloze_plan


rule ingest_cloze_test:
    input:
        archive=get_cloze_test_archive,
    output:
        annotations=cloze_plan.annotations_file("{cloze_test}"),
    params:
        job="plmfair.cloze.annotations:ingest_cloze_test",
        languages=from_plan(cloze_plan.cloze_test_languages, "cloze_test"),
    # ahead of the scoring jobs: a model's first scoring job scores its other data sets only once
    # they are ingested (plmfair.scoring.shared_load)
    priority: 10
    log:
        "results/logs/ingest/{cloze_test}.log",
    resources:
        **sized("ingest_cloze_test"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/library_job.py"


# MozArt's appendix B, for each ready-made cloze test: each model's top predictions for a few
# quadruples, in every language, as last-layer vectors (a scoring job), then projected together by
# t-SNE and drawn.
rule tsne_vectors:
    input:
        annotations=cloze_plan.annotations_file("{cloze_set}"),
        model=plan.MODEL_MANIFEST,
    output:
        vectors=cloze_plan.set_file("{cloze_set}", "tsne/{model}"),
    params:
        model=from_plan(plan.model_loading, "model"),
        sentences=plan.setting(config, "mozart.tsne.sentences"),
        top_k=plan.setting(config, "mozart.tsne.top_k"),
        num_beams=from_plan(plan.num_beams, "model", study="mozart"),
        precision=from_plan(plan.model_precision, "model", study="mozart"),
    log:
        "results/logs/cloze/{cloze_set}/tsne_{model}.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/tsne_{model}.tsv"
    threads: SCORING_THREADS
    group:
        "score_{model}"
    resources:
        **scoring_resources("tsne_vectors"),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/tsne_vectors.py"


rule tsne:
    input:
        vectors=get_tsne_vectors,
    output:
        coordinates=cloze_plan.set_file("{cloze_set}", "tsne"),
        png=report(
            "results/figures/{cloze_set}_tsne.png",
            caption="../report/tsne.rst",
            category=from_plan(plan.subject_category, "cloze_set", subjects="answered_sets"),
            subcategory="Figures",
            labels={"figure": "t-SNE of each model's top predictions"},
        ),
        pdf="results/figures/{cloze_set}_tsne.pdf",
    params:
        perplexity=plan.setting(config, "mozart.tsne.perplexity"),
        seed=plan.setting(config, "mozart.tsne.seed"),
    log:
        "results/logs/cloze/{cloze_set}/tsne.log",
    benchmark:
        "results/benchmarks/cloze/{cloze_set}/tsne.tsv"
    resources:
        **sized("tsne"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/tsne.py"
