# Every table of plmfair.plan.targets.all_tables() (each study's outputs.py), made for each of its subjects: built from its Parquet
# inputs and written as CSV, Markdown, LaTeX and HTML; the HTML goes into the report with its own
# caption (workflow/report/table.rst renders params.rendering.caption), under its study.


rule table:
    localrule: True
    input:
        unpack(get_table("inputs")),
    output:
        csv="results/tables/{table}.csv",
        md="results/tables/{table}.md",
        tex="results/tables/{table}.tex",
        html=report(
            "results/tables/{table}.html",
            caption="../report/table.rst",
            category=get_table("category"),
            subcategory="Tables",
            labels={"table": "{table}"},
        ),
    params:
        rendering=get_table("rendering"),
        # the models table's caption tells what the config says of each model that ran
        models=from_plan(plan.caption_models, "table"),
    log:
        "results/logs/tables/{table}.log",
    resources:
        **sized("table"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/table.py"
