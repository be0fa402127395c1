"""The report's caption of one table or figure among those its job makes."""

from __future__ import annotations

import json


def caption_stub(name: str, template: str) -> str:
    """A caption of the report for the output ``name``: the caption ``template`` (workflow/report/table.rst or
    figure.rst, a Jinja template that reads the job's params) headed by the output's name, which picks its
    entry of the params (``output``). Snakemake renders a caption with the params of the job, which makes
    several outputs, not with the file's."""
    return f"{{% set output = snakemake.params.outputs[{json.dumps(name)}] %}}\n{template}"
