"""MkDocs hooks (mkdocs.yml ``hooks:``): the pages that are generated, never written by hand, so that they cannot
drift from what they describe.

- ``reference/configuration.md``: every key of the configuration's schema (``workflow/schemas/config.schema.yaml``
  and each study package's ``config.schema.yaml``, merged by ``plmfair.config.config_schema``) with its type,
  default and description, section by section;
- ``reference/outputs.md``: every table and figure a run can make (``plmfair.plan.targets``: the shared ones and each
  study's ``outputs.py``), with the subjects it is made for, its title and its caption;
- ``validation/index.md``: the validation pages the benchmarks wrote into ``docs/validation/`` (each opens with the
  command and commit that made it), listed.
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent


def _cell(text) -> str:
    """Text as one Markdown table cell: lines joined, pipes escaped, and outside code spans ``<`` kept literal
    (not read as an HTML tag)."""
    spans = " ".join(str(text).split()).replace("|", "\\|").split("`")
    return "`".join(part if i % 2 else part.replace("<", "&lt;") for i, part in enumerate(spans))


def _type(node: dict) -> str:
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    kind = node.get("type", "object" if "properties" in node else "")
    return " or ".join(kind) if isinstance(kind, list) else str(kind)


def _default(node: dict) -> str:
    return f"`{json.dumps(node['default'])}`" if "default" in node else ""


def _description(key: str, node: dict) -> str:
    """A key's description; an entry of a map (``<name>``) says whose it is when its schema says nothing."""
    if node.get("description"):
        return node["description"]
    return f"one entry of `{key.rsplit('.', 1)[0]}`, under a name of yours" if key.endswith("<name>") else ""


def _keys(node: dict, path: str):
    """(dotted key, its schema) for every key under ``node``, depth first; a map's entries as ``<name>``."""
    for key, child in (node.get("properties") or {}).items():
        if not isinstance(child, dict):
            continue
        where = f"{path}.{key}" if path else key
        yield where, child
        yield from _keys(child, where)
        if isinstance(child.get("additionalProperties"), dict):
            yield f"{where}.<name>", child["additionalProperties"]
            yield from _keys(child["additionalProperties"], f"{where}.<name>")
        if isinstance(child.get("items"), dict) and "properties" in child["items"]:
            yield from _keys(child["items"], f"{where}[]")


def configuration_page() -> str:
    from plmfair.config import config_schema

    schema = config_schema()
    lines = [
        "# Configuration reference",
        "",
        "Generated from the descriptions of the configuration's schema (`workflow/schemas/config.schema.yaml` for "
        "the shared sections, each study's `config.schema.yaml` beside its code for its own), which every run's "
        "configuration is checked against before any job starts; `config/config.yaml` holds the values. "
        "A key's default is filled in where the file leaves it out.",
        "",
    ]
    for section, node in (schema.get("properties") or {}).items():
        lines += [f"## `{section}`", "", _cell(node.get("description", "")), ""]
        rows = [(section, node), *_keys(node, section)]
        lines += ["| key | type | default | description |", "|---|---|---|---|"]
        lines += [
            f"| `{key}` | {_cell(_type(child))} | {_cell(_default(child))} | {_cell(_description(key, child))} |"
            for key, child in rows
        ]
        lines.append("")
    return "\n".join(lines)


def outputs_page() -> str:
    from plmfair.plan.targets import all_figures, all_tables

    lines = [
        "# Outputs catalogue",
        "",
        "Generated from the table and figure specifications (`plmfair.plan.targets` and each study's "
        "`outputs.py`): every table (`results/tables/<name>.{csv,md,tex,html}`) and figure "
        "(`results/figures/<name>.{png,pdf}`) a run can make, with the caption the report gives it. `{subject}` is "
        "the data set or cloze set it is made for; `{alpha}` is the run's `analysis.alpha`.",
        "",
        "## Tables",
        "",
    ]
    for spec in all_tables().values():
        lines += [f"### `{spec.name}`", "", f"**{_cell(spec.title)}** (made for: {spec.subjects})", ""]
        lines += [_cell(spec.caption), ""]
    lines += ["## Figures", ""]
    for spec in all_figures().values():
        caption = spec.caption or "Drawn by the job that computes it; its caption is in `workflow/report/`."
        lines += [f"### `{spec.name}`", "", f"**{_cell(spec.label)}** (made for: {spec.subjects})", ""]
        lines += [_cell(caption), ""]
    return "\n".join(lines)


def validation_index(docs: Path) -> str:
    pages = sorted(p for p in (docs / "validation").glob("*.md") if p.name != "index.md")
    lines = [
        "# Validation",
        "",
        "Pages the benchmarks write themselves (`make bench-stats`, `make bench`, ...): each opens with the "
        "command that made it and the commit it ran at. docs/performance.md and docs/statistics.md say what each "
        "benchmark measures and against which target.",
        "",
    ]
    for page in pages:
        first = page.read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
        lines.append(f"- [{first}]({page.name})")
    if not pages:
        lines.append("No benchmark has written a page yet.")
    return "\n".join(lines) + "\n"


def on_files(files, config):
    docs = Path(config["docs_dir"])
    for uri, content in (
        ("reference/configuration.md", configuration_page()),
        ("reference/outputs.md", outputs_page()),
        ("validation/index.md", validation_index(docs)),
    ):
        files.append(File.generated(config, uri, content=content))
    return files
