# Every table and figure of plmfair.plan.targets.all_tables() and all_figures() (each study's outputs.py),
# made for each of its subjects: one job per owner (a study, or the run's own tables) and subject makes all
# of them (plmfair.plan.output_jobs), a rule <job>_tables and a rule <job>_figures each. A table is built from
# its Parquet inputs and written as CSV, Markdown, LaTeX and HTML; the HTML goes into the report under its
# study, with its own caption (workflow/report/table.rst, headed by the table's name by the job:
# plmfair.rendering.captions).


from snakemake.io import report as in_report  # a line opening with report( would be the report: directive

# the caption templates, read by the jobs that head them with an output's name
TABLE_CAPTION, FIGURE_CAPTION = (
    str(Path(workflow.basedir) / f"workflow/report/{kind}.rst") for kind in ("table", "figure")
)


def _output_job(kind, outputs):
    """What a job of ``kind`` (table or figure) reads (the outputs' inputs) and writes, and its params: every
    output's entry, its files (the report's page, plan.TABLE_HTML or FIGURE_PNG, with its caption, category
    and labels) and its caption."""
    page = {"table": plan.TABLE_HTML, "figure": plan.FIGURE_PNG}[kind]
    files = []
    entries = {}
    for name, output in outputs.items():
        caption = plan.CAPTIONS[kind].format(name=name)
        own = output.files()
        for path in own.values():
            files.append(
                in_report(
                    path,
                    caption=str(Path(caption).resolve()),
                    category=output.category,
                    subcategory=f"{kind.title()}s",
                    labels=output.labels(),
                )
                if path == page.format(**{kind: name})
                else path
            )
        files.append(caption)
        entries[name] = {"inputs": output.inputs, "files": own, "caption": caption}
    inputs = sorted({path for output in outputs.values() for path in output.inputs.values()})
    return {"inputs": inputs, "outputs": files, "entries": entries}


for job, outputs in plan.output_jobs(TABLES).items():
    made = _output_job("table", outputs)

    rule:
        name:
            f"{job}_tables"
        localrule: True
        input:
            made["inputs"],
            template=TABLE_CAPTION,
        output:
            made["outputs"],
        params:
            # each table's inputs, files, rendering and the models whose config free text its caption tells
            # (those that ran, for the models table)
            outputs={
                name: {
                    **entry,
                    "rendering": outputs[name].rendering(),
                    "models": plan.caption_models(config, name),
                }
                for name, entry in made["entries"].items()
            },
        log:
            f"results/logs/tables/{job}.log",
        resources:
            **sized("tables"),
        conda:
            "../../envs/stats.yaml"
        script:
            "../scripts/table.py"


# A figure is drawn from its Parquet inputs by its drawer (a library function) as PNG and PDF; the PNG goes
# into the report with its own caption (workflow/report/figure.rst) and label, under its study. (A figure
# that a job of its own draws from what it computes, the t-SNE map, is that job's.)
for job, outputs in plan.output_jobs(FIGURES).items():
    made = _output_job("figure", outputs)

    rule:
        name:
            f"{job}_figures"
        localrule: True
        input:
            made["inputs"],
            template=FIGURE_CAPTION,
        output:
            made["outputs"],
        params:
            outputs={name: {**entry, "drawing": outputs[name].drawing()} for name, entry in made["entries"].items()},
        log:
            f"results/logs/figures/{job}.log",
        resources:
            **sized("figures"),
        conda:
            "../../envs/stats.yaml"
        script:
            "../scripts/figure.py"
