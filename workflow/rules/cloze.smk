rule build_spacy_pipeline:
    localrule: True
    input:
        lexicon=get_spacy_lexicon,
    output:
        pipeline=directory("resources/spacy/{lang}"),
    params:
        lang="{lang}",
    log:
        "results/logs/cloze/build_spacy_{lang}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/build_spacy_pipeline.py"


rule cloze_join_bitexts:
    input:
        unpack(get_cloze_bitext_files),
    output:
        joined="results/cloze/{corpus}/joined.parquet",
        counts="results/cloze/{corpus}/join_counts.parquet",
    params:
        bitexts=get_cloze_bitext_members,
        pivot=get_cloze_pivot,
        duplicates=get_cloze_duplicates,
    log:
        "results/logs/cloze/{corpus}/join_bitexts.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/join_bitexts.tsv"
    resources:
        mem_mb=6000,
        runtime=30,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/cloze_join_bitexts.py"


rule cloze_tokenize:
    input:
        text=get_cloze_text,
        pipeline=get_spacy_pipeline_files,
    output:
        tokens="results/cloze/{corpus}/tokens/{lang}.parquet",
    params:
        member=get_cloze_text_member,
        pipeline=get_spacy_pipeline,
        tokenized=get_cloze_tokenized,
        empty_lines=config["cloze"]["empty_lines"],
    log:
        "results/logs/cloze/{corpus}/tokenize_{lang}.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/tokenize_{lang}.tsv"
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/cloze_tokenize.py"


rule cloze_align:
    input:
        unpack(get_cloze_align_inputs),
    output:
        alignments="results/cloze/{corpus}/alignments/{lang}.parquet",
    params:
        settings=get_cloze_align_params,
    log:
        "results/logs/cloze/{corpus}/align_{lang}.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/align_{lang}.tsv"
    threads: 4
    resources:
        mem_mb=8000,
        runtime=120,
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/cloze_align.py"


rule cloze_select:
    input:
        tokens=get_cloze_token_files,
        alignments=get_cloze_alignment_files,
        join_counts=get_cloze_join_counts,
        pipelines=get_cloze_pipeline_files,
    output:
        sentences="results/cloze/{corpus}/sentences.parquet",
        counts="results/cloze/{corpus}/construction.parquet",
    params:
        pivot=get_cloze_pivot,
        pipelines=get_cloze_pipelines,
        tokenized=get_cloze_tokenized,
        filters=config["cloze"]["filters"],
        sample=config["cloze"]["sample"],
    log:
        "results/logs/cloze/{corpus}/select.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/select.tsv"
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/cloze_select.py"


rule cloze_alignment_quality:
    input:
        unpack(get_gold_alignment_inputs),
    output:
        quality="results/cloze/{corpus}/alignment_quality.parquet",
        links="results/cloze/{corpus}/gold_alignment_links.parquet",
    params:
        gold=get_gold_alignment_params,
        pivot=get_cloze_pivot,
        eflomal_options=config["cloze"]["eflomal"],
    log:
        "results/logs/cloze/{corpus}/alignment_quality.log",
    benchmark:
        "results/benchmarks/cloze/{corpus}/alignment_quality.tsv"
    threads: 4
    resources:
        mem_mb=8000,
        runtime=120,
    conda:
        "../../envs/cloze.yaml"
    script:
        "../scripts/cloze_alignment_quality.py"


rule alignment_quality_table:
    localrule: True
    input:
        quality=get_alignment_quality_files(),
    output:
        csv="results/tables/alignment_quality.csv",
        md="results/tables/alignment_quality.md",
        tex="results/tables/alignment_quality.tex",
    log:
        "results/logs/tables/alignment_quality.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/alignment_quality_table.py"


rule cloze_construction_table:
    localrule: True
    input:
        counts=get_cloze_count_files(),
    output:
        csv="results/tables/cloze_construction.csv",
        md="results/tables/cloze_construction.md",
        tex="results/tables/cloze_construction.tex",
    log:
        "results/logs/tables/cloze_construction.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/cloze_construction_table.py"


rule cloze_sheets:
    localrule: True
    input:
        sentences="results/cloze/{corpus}/sentences.parquet",
    output:
        sheets=directory("results/cloze/{corpus}/sheets"),
    params:
        batch_size=config["cloze"]["sheet_size"],
    log:
        "results/logs/cloze/{corpus}/sheets.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/cloze_sheets.py"


rule ingest_cloze_answers:
    input:
        sentences="results/cloze/{corpus}/sentences.parquet",
        answers=get_cloze_answer_files,
    output:
        annotations="results/data/cloze/{corpus}/annotations.parquet",
    params:
        answers=get_cloze_answer_params,
    log:
        "results/logs/ingest/cloze_{corpus}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/ingest_cloze_answers.py"
