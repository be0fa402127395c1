# Cloze sets constructed from multi-way parallel text (study cloze): each corpus tokenized and tagged by
# spaCy, aligned to its pivot, its quadruples selected and sampled, its answer sheets written and its
# human answers ingested; alignment quality against gold alignments.
from plmfair.cloze import plan as cloze_plan
from plmfair.cloze.construction import plan as construction_plan

# The lookup pipelines the workflow builds (the demo's, from word lists), all in one job: each takes a second.
BUILT_PIPELINES = construction_plan.built_pipelines(config)
if BUILT_PIPELINES:

    rule build_spacy_pipelines:
        localrule: True
        input:
            lexicons=[download(p.lexicon) for p in BUILT_PIPELINES],
        output:
            pipelines=[directory(path) for path in spacy_built(BUILT_PIPELINES)],
        params:
            # (the input and output above make the job wait for and own these files; the script reads them by
            # language)
            pipelines={
                p.lang: {"lexicon": download(p.lexicon), "folder": folder}
                for p, folder in zip(BUILT_PIPELINES, spacy_built(BUILT_PIPELINES))
            },
        log:
            "results/logs/cloze/build_spacy_pipelines.log",
        resources:
            **sized("build_spacy_pipelines"),
        conda:
            "../../envs/cloze.yaml"
        script:
            "../scripts/build_spacy_pipelines.py"


rule cloze_join_bitexts:
    input:
        unpack(get_cloze_bitext_files),
    output:
        joined=cloze_plan.set_file("{corpus}", "joined"),
        counts=cloze_plan.set_file("{corpus}", "join_counts"),
    params:
        join=from_plan(construction_plan.bitext_join, "corpus"),
    log:
        "results/logs/cloze/{corpus}/join_bitexts.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/join_bitexts.tsv"
    resources:
        **sized("cloze_join_bitexts"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/cloze_join_bitexts.py"


rule cloze_tokenize:
    input:
        unpack(get_cloze_tokenize_inputs),
    output:
        tokens=cloze_plan.set_file("{corpus}", "tokens/{lang}"),
    params:
        reading=from_plan(construction_plan.text_reading, "corpus", "lang"),
        pipeline=get_spacy_pipeline,
        empty_lines=plan.setting(config, "cloze.empty_lines"),
    log:
        "results/logs/cloze/{corpus}/tokenize_{lang}.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/tokenize_{lang}.tsv"
    resources:
        **sized("cloze_tokenize"),
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/cloze_tokenize.py"


rule cloze_align:
    input:
        unpack(get_cloze_align_inputs),
    output:
        alignments=cloze_plan.set_file("{corpus}", "alignments/{lang}"),
    params:
        settings=get_cloze_align_settings,
    log:
        "results/logs/cloze/{corpus}/align_{lang}.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/align_{lang}.tsv"
    threads: 4
    resources:
        **sized("cloze_align"),
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/cloze_align.py"


rule cloze_select:
    input:
        unpack(get_cloze_select_inputs),
    output:
        sentences=cloze_plan.set_file("{corpus}", "sentences"),
        counts=cloze_plan.set_file("{corpus}", "construction"),
    params:
        corpus=get_cloze_select_settings,
        filters=plan.setting(config, "cloze.filters"),
        sample=plan.setting(config, "cloze.sample"),
    log:
        "results/logs/cloze/{corpus}/select.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/select.tsv"
    resources:
        **sized("cloze_select"),
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/cloze_select.py"


rule cloze_alignment_quality:
    input:
        unpack(get_gold_alignment_inputs),
    output:
        quality=cloze_plan.set_file("{corpus}", "alignment_quality"),
        links=cloze_plan.set_file("{corpus}", "gold_alignment_links"),
    params:
        gold=from_plan(construction_plan.gold_readings, "corpus"),
        langs=from_plan(construction_plan.gold_langs, "corpus"),
        token_files=get_gold_token_files,
        eflomal_options=plan.setting(config, "cloze.eflomal"),
    log:
        "results/logs/cloze/{corpus}/alignment_quality.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/alignment_quality.tsv"
    threads: 4
    resources:
        **sized("cloze_alignment_quality"),
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/cloze_alignment_quality.py"


rule cloze_sheets:
    localrule: True
    input:
        sentences=cloze_plan.set_file("{corpus}", "sentences"),
    output:
        sheets=directory(cloze_plan.sheets_folder("{corpus}")),
    params:
        batch_size=plan.setting(config, "cloze.sheet_size"),
    log:
        "results/logs/cloze/{corpus}/sheets.log",
    resources:
        **sized("cloze_sheets"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/cloze_sheets.py"


rule ingest_cloze_answers:
    input:
        sentences=cloze_plan.set_file("{corpus}", "sentences"),
        answers=get_answer_files,
    output:
        annotations=cloze_plan.annotations_file("{corpus}"),
    params:
        answers=get_answer_downloads,
    log:
        "results/logs/ingest/cloze_{corpus}.log",
    resources:
        **sized("ingest_cloze_answers"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_cloze_answers.py"
