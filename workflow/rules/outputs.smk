# Every table and figure of plmfair.plan.targets.all_tables() and all_figures() (each study's outputs.py),
# made for each of its subjects. A table is built from its Parquet inputs and written as CSV, Markdown,
# LaTeX and HTML; the HTML goes into the report with its own caption (workflow/report/table.rst renders
# params.rendering.caption), under its study.


rule table:
    localrule: True
    input:
        unpack(get_table("inputs")),
    output:
        csv="results/tables/{table}.csv",
        md="results/tables/{table}.md",
        tex="results/tables/{table}.tex",
        html=report(
            plan.TABLE_HTML,
            caption="../report/table.rst",
            category=get_table("category"),
            subcategory="Tables",
            labels=get_table("labels"),
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


# A figure is drawn from its Parquet inputs by its drawer (a library function) as PNG and PDF; the PNG goes
# into the report with its own caption (workflow/report/figure.rst) and label, under its study. (A figure
# that a job of its own draws from what it computes, the t-SNE map, is that job's.)


rule figure:
    localrule: True
    input:
        unpack(get_figure("inputs")),
    output:
        png=report(
            plan.FIGURE_PNG,
            caption="../report/figure.rst",
            category=get_figure("category"),
            subcategory="Figures",
            labels=get_figure("labels"),
        ),
        pdf="results/figures/{figure}.pdf",
    params:
        drawing=get_figure("drawing"),
    log:
        "results/logs/figures/{figure}.log",
    resources:
        **sized("figure"),
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/figure.py"
