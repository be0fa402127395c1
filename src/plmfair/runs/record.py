"""A run's results record, ``results/run.json``: everything needed to cite a number of the run.

In the spirit of lm-evaluation-harness's results file: the effective configuration (merged,
every default filled in), each model that ran (family, source, revision asked for, commit and
SHA-256 of what was loaded, precision, device, protocol, token budget), every data file with its
SHA-256, plmfair's version and git commit, the versions of Python and the libraries, when the
run's jobs ran and how long each took, and the headline numbers with their intervals, p-values,
marks and counts: the answers to the studies' primary questions first (the run's hypotheses,
:mod:`plmfair.runs.hypotheses`, whose marks every number carries), CrowS-Pairs (Nangia's score and
the decisive-pair share per data set and model), cloze sets with answers (P@1, P@5, MRR per language
and group; sigma_gd with its interval, critical value and test; the omnibus test).

:func:`run_record` builds it from the Parquet results it summarises (the ``run_record`` rule's
inputs, so it is never older than they are); :func:`write_run_record` validates it against
:func:`record_schema` (every field documented there) and writes it
atomically (its page for people, ``results/run.html``, is :mod:`plmfair.runs.record_page`'s); :func:`headline`
prints its numbers for people
(the end of ``plmfair run``, ``plmfair show``).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import pandas as pd

from plmfair.errors import DataError, program
from plmfair.io.atomic import write_text
from plmfair.io.download import sha256_of
from plmfair.io.parquet import read_parquet, read_parquet_meta
from plmfair.rendering.numbers import level
from plmfair.rendering.record_rows import plain, record_alpha
from plmfair.rendering.table_format import to_markdown, with_display
from plmfair.runs import integrity
from plmfair.scoring.coverage import distinct
from plmfair.studies import Headline, record_parts, study_record

ROOT = Path(__file__).resolve().parents[3]  # the checkout (git commit, schema)
SCHEMA = ROOT / "workflow" / "schemas" / "run_record.schema.yaml"
# 2: the published files with their SHA-256 (files); 3: net preference, testable, Holm p; 4: the analysis plan
# (primary answers, every mark from it); 5: each primary answer in words; 6: the analysis plan called the
# hypotheses (results.hypotheses, results/hypotheses.parquet)
RECORD_VERSION = 6
PACKAGES = (
    "torch",
    "transformers",
    "tokenizers",
    "snakemake",
    "pandas",
    "numpy",
    "scipy",
    "statsmodels",
    "spacy",
    "eflomal",
)
# what a model's scoring output says of how it ran (its run metadata)
RUN_KEYS = ("precision", "device", "device_map", "threads", "protocol", "token_budget", "k", "num_beams")


def _git(*args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def software() -> dict:
    """plmfair's version and git commit (dirty when tracked files differ from it), Python, the platform and
    the libraries' versions."""

    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {
        "plmfair": version("plmfair"),
        "git_commit": commit,
        "git_dirty": bool(status) if status is not None else None,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {name: version(name) for name in PACKAGES},
    }


def job_times(benchmarks: str | os.PathLike) -> dict:
    """When the run's jobs ran and how long each took, from Snakemake's benchmark files: the first job's
    start (its file's time less its duration), the last job's end, and per stage (the folder under
    results/benchmarks/) the jobs, their seconds and the largest resident memory."""
    files = sorted(Path(benchmarks).rglob("*.tsv"))
    jobs: list[dict] = []
    for path in files:
        table = pd.read_csv(path, sep="\t")
        if table.empty:
            continue
        row = table.iloc[-1]
        jobs.append(
            {
                "job": path.relative_to(benchmarks).with_suffix("").as_posix(),
                "seconds": float(row["s"]),
                "max_rss_mb": float(row["max_rss"]) if pd.notna(row.get("max_rss")) else None,
                "ended": path.stat().st_mtime,
            }
        )
    stages: dict[str, dict] = {}
    for job in jobs:
        stage = stages.setdefault(job["job"].split("/")[0], {"jobs": 0, "seconds": 0.0, "max_rss_mb": None})
        stage["jobs"] += 1
        stage["seconds"] = round(stage["seconds"] + job["seconds"], 2)
        if job["max_rss_mb"] is not None:
            stage["max_rss_mb"] = max(stage["max_rss_mb"] or 0.0, job["max_rss_mb"])

    def stamp(seconds: float) -> str:
        return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")

    return {
        "first_job_started": stamp(min(j["ended"] - j["seconds"] for j in jobs)) if jobs else None,
        "last_job_ended": stamp(max(j["ended"] for j in jobs)) if jobs else None,
        "stages": stages,
        "jobs": [{k: j[k] for k in ("job", "seconds", "max_rss_mb")} for j in jobs],
    }


def models_section(models: pd.DataFrame | None, runs: Mapping[str, str], config: Mapping) -> list[dict]:
    """Each model that ran: what the config asked for, what was loaded (models.parquet) and how it ran (the
    run metadata of its first scoring output)."""
    if models is None:
        return []
    out = []
    for _, row in models.iterrows():
        name = row["model"]
        asked = config.get("models", {}).get(name, {})
        meta = read_parquet_meta(runs[name]) if name in runs else {}
        out.append(
            plain(
                {
                    "name": name,
                    "family": row["model_family"],
                    "source": row["model_source"],
                    "revision_requested": asked.get("revision"),
                    "commit": row["model_commit"],
                    "files_sha256": row["model_files_sha256"],
                    "uncased": bool(row["model_uncased"]),
                    "parameters": row["model_parameters"],
                    "tokenizer": row["model_tokenizer"],
                    "max_length": row["model_max_length"],
                    **{key: meta.get(key) for key in RUN_KEYS},
                }
            )
        )
    return out


def data_section(files: Sequence[str], pinned: Mapping[str, str | None]) -> list[dict]:
    """Every data file the run read, its size and SHA-256, and the SHA-256 the config pins by file name
    (null: the download ran unverified)."""
    return [
        {
            "file": Path(f).name,
            "bytes": Path(f).stat().st_size,
            "sha256": sha256_of(f),
            "sha256_config": pinned.get(Path(f).name),
        }
        for f in files
    ]


def published_section(paths: Sequence[str], *, sealed_in: str | os.PathLike | None = None) -> list[dict]:
    """Every file the run publishes (:func:`plmfair.plan.published_files`), the files of a folder output
    one by one, each with its size and SHA-256: what ``plmfair verify`` checks the run folder against.
    With ``sealed_in`` (the run folder, in the record's job), a file whose content is not what its seal says
    its job wrote, or that has no readable seal, is refused: the record never hashes in an edited file."""
    files = []
    seals = integrity.seals(sealed_in) if sealed_in is not None else None
    for path in map(Path, paths):
        inside = (
            sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            if path.is_dir()
            else [path]
        )
        for p in inside:
            entry: dict = {"path": p.as_posix(), "bytes": p.stat().st_size, "sha256": sha256_of(p)}
            seal = seals.get(entry["path"]) if seals is not None else None
            if seals is not None and (seal is None or seal["sha256"] != entry["sha256"]):
                raise DataError(
                    f"{entry['path']}: {'its seal is missing or broken' if seal is None else 'not what its job wrote'}"
                    f", so the record would hash in a file the workflow cannot vouch for; run the workflow again "
                    f"(plmfair run sets such a file aside and rebuilds it)"
                )
            files.append(entry)
    return files


def _primary(frames: Sequence[tuple[pd.DataFrame, str, str]], hypotheses: pd.DataFrame | None) -> list[dict]:
    """The answers to the primary questions: each ``(frame, estimate column, estimand)``'s rows the run's
    ``hypotheses`` hold as primary, with the question, the estimate, its interval and the test's decision."""
    if hypotheses is None:
        return []
    questions = hypotheses.set_index("hypothesis")
    rows = []
    for frame, estimate, estimand in frames:
        primary = frame[frame["hypothesis"].map(questions["primary"]).fillna(False).astype(bool)]
        for _, r in primary.iterrows():
            q = questions.loc[r["hypothesis"]]
            rows.append(
                plain(
                    {
                        "hypothesis": r["hypothesis"],
                        "study": q["study"],
                        "question": q["question"],
                        "answer": r["answer"],
                        "estimate": r[estimate],
                        "estimand": estimand,
                        "ci_low": r["ci_low"],
                        "ci_high": r["ci_high"],
                        "ci_level": r["ci_level"],
                        "p_value": q["p_value"],
                        "p_adjusted": q["p_adjusted"],
                        "family": q["family"],
                        "significant": bool(q["significant"]),
                    }
                )
            )
    return rows


def _hypothesis_counts(hypotheses: pd.DataFrame | None, alpha: float) -> dict:
    """The hypotheses in counts: per family, its procedure, tests and significant ones."""
    if hypotheses is None or hypotheses.empty:
        return {"alpha": alpha, "families": {}}
    families = {
        family: {"procedure": str(g["procedure"].iloc[0]), "tests": len(g), "significant": int(g["significant"].sum())}
        for family, g in hypotheses.groupby("family", sort=False)
    }
    return {"alpha": float(hypotheses["alpha"].iloc[0]), "families": families}


def run_record(
    *,
    config: Mapping,
    models: str | None = None,
    model_runs: Sequence[str] = (),
    studies: Mapping[str, Sequence[str]] | None = None,
    hypotheses: str | None = None,
    data: Sequence[str] = (),
    pinned: Mapping[str, str | None] | None = None,
    published: Sequence[str] = (),
    benchmarks: str | os.PathLike = "results/benchmarks",
    sealed_in: str | os.PathLike | None = None,
) -> dict:
    """The record of a run from the paths of its results (each optional: a run may have one study). A model's
    scoring output is named by its file (``<model>.parquet``); ``studies``: per study, the files its part
    summarises (:func:`plmfair.plan.recorded_files`; the part is the study's ``record`` module's); every
    mark and adjusted p is the run's ``hypotheses``' (:mod:`plmfair.runs.hypotheses`). ``sealed_in``: the run
    folder whose seals the published files must agree with (:func:`published_section`)."""
    model_frame = read_parquet(models) if models else None
    decided = read_parquet(hypotheses) if hypotheses else None
    results: dict[str, list] = {key: [] for part in record_parts() for key in part.SCHEMA}
    primary: list[tuple[pd.DataFrame, str, str]] = []
    for name, files in (studies or {}).items():
        part = study_record(name).part().record_part(files, decided)
        for key, study_rows in part.rows.items():
            results[key] += study_rows
        primary += part.primary
    results["warnings"] = distinct(r.get("coverage_warning") for study_rows in results.values() for r in study_rows)
    alpha = float(config["analysis"]["alpha"])
    return {
        "record_version": RECORD_VERSION,
        "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "software": software(),
        "times": job_times(benchmarks),
        "models": models_section(model_frame, {Path(p).stem: p for p in model_runs}, config),
        "data": data_section(data, pinned or {}),
        "config": plain(dict(config)),
        "results": {
            "hypotheses": _hypothesis_counts(decided, alpha),
            "primary": _primary(primary, decided),
            **results,
        },
        "files": published_section(published, sealed_in=sealed_in),
    }


# what a record holds that its result files do not give again: when it was written and how long its jobs
# took, the software that wrote it, and the published files' digests (plmfair verify re-hashes those)
NOT_DERIVED = ("record_version", "written", "times", "software", "files")


def _differences(recorded: object, derived: object, where: str = "") -> Iterator[str]:
    """Where two JSON values differ, as 'path: the files give Y, the record another value' (the first of a
    list's differing items each): what the record says there is not repeated, as no number of an edited
    record is shown."""
    if isinstance(recorded, dict) and isinstance(derived, dict):
        for key in dict.fromkeys([*recorded, *derived]):
            yield from _differences(recorded.get(key), derived.get(key), f"{where}.{key}" if where else key)
    elif isinstance(recorded, list) and isinstance(derived, list) and len(recorded) == len(derived):
        for i, (a, b) in enumerate(zip(recorded, derived, strict=True)):
            yield from _differences(a, b, f"{where}[{i}]")
    elif recorded != derived:
        yield f"{where}: the files give {json.dumps(derived)[:60]}, the record another value"


def rederived_differences(run: str | os.PathLike, record: Mapping) -> list[str]:
    """The numbers of a run's ``record`` that its result files do not give: the record rebuilt in memory
    from the files it summarises (:func:`run_record` on the inputs the record's configuration names) and
    compared field by field, but for :data:`NOT_DERIVED`. Empty when every number is its files'."""
    # the plan names the inputs; only when a record is checked
    from plmfair import plan

    config = record.get("config", {})
    inputs = plan.run_record_inputs(config)
    try:
        with contextlib.chdir(run):
            rebuilt = run_record(
                config=config,
                models=next(iter(inputs["models"]), None),
                model_runs=inputs["model_runs"],
                studies=plan.recorded_files(config),
                hypotheses=next(iter(inputs["hypotheses"]), None),
                data=inputs["data"],
                pinned=plan.pinned_checksums(config),
            )
    except (OSError, ValueError, KeyError, DataError) as exc:
        return [f"the record cannot be derived again from the run's files ({str(exc).splitlines()[0][:200]})"]
    derived = json.loads(json.dumps({k: v for k, v in rebuilt.items() if k not in NOT_DERIVED}, ensure_ascii=False))
    recorded = {k: v for k, v in record.items() if k not in NOT_DERIVED}
    return list(_differences(recorded, derived))


def record_schema() -> dict:
    """The record's schema: :data:`SCHEMA` with each study's part of ``results`` (its record module's
    ``SCHEMA``, :func:`plmfair.rendering.record_rows.schema_part`) among the properties it requires."""
    # only when a record is validated
    import yaml

    with open(SCHEMA, encoding="utf-8") as fh:
        schema = yaml.safe_load(fh)
    results = schema["properties"]["results"]
    for part in record_parts():
        results["properties"].update(part.SCHEMA)
        results["required"] += list(part.SCHEMA)
    return schema


def validate_record(record: Mapping) -> None:
    """Raise :class:`DataError` naming the field when ``record`` does not follow the schema
    (:func:`record_schema`)."""
    # only when a config or a record is validated
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(record_schema()).iter_errors(record))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise DataError(
            f"run record at {where}: {error.message} (workflow/schemas/run_record.schema.yaml and each "
            f"study's run_record.schema.yaml)"
        )


def write_run_record(record: Mapping, *, json_path: str | os.PathLike) -> None:
    """Validate and write the record atomically (its page for people: :mod:`plmfair.runs.record_page`)."""
    validate_record(record)
    write_text(json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n", json_path)


def read_run_record(path: str | os.PathLike) -> dict:
    """A run's record, checked against the schema; a missing one is named with the command that writes it."""
    path = Path(path)
    if not path.is_file():
        run = path.parent.parent
        raise DataError(
            f"{path}: no run record; it is written at the end of a run: {program()} run --run {run.name} "
            f"--runs {run.parent}"
        )
    record = json.loads(path.read_text(encoding="utf-8"))
    if record.get("record_version") != RECORD_VERSION:
        run = path.parent.parent
        raise DataError(
            f"{path}: a record of version {record.get('record_version')} (this plmfair writes version "
            f"{RECORD_VERSION}); rewrite it from the run's results: {program()} run --run {run.name} --runs "
            f"{run.parent}"
        )
    validate_record(record)
    return record


PRIMARY_LINE = ("question", "answer", "estimate", "low", "high", "p", "p adjusted", "significant", "note")


def primary_lines(record: Mapping) -> pd.DataFrame:
    """The answers to the studies' primary questions (the run's confirmatory family), printed by the display
    rule: each question, its estimate with the interval of its test, its p and Holm-adjusted p (``*``)."""
    rows = [
        {
            "question": r["question"],
            "answer": r["answer"],
            "estimate": r["estimate"],
            "low": r["ci_low"],
            "high": r["ci_high"],
            "p": r["p_value"],
            "p adjusted": r["p_adjusted"],
            "significant": r["significant"],
            "note": "" if r["family"] == "confirmatory" else r["family"],
        }
        for r in record["results"]["primary"]
    ]
    return with_display(
        pd.DataFrame(rows, columns=PRIMARY_LINE).astype({"low": float, "high": float}),
        alpha=record_alpha(record),
        intervals={"interval": ("low", "high", float("nan"))},
        marks={"p adjusted": "significant"},
    )


def headlines() -> list[Headline]:
    """Every study's headline tables, in the registry's order (a ``record`` module two studies share
    counted once)."""
    return [table for module in record_parts() for table in module.HEADLINES]


def headline_tables(record: Mapping) -> list[tuple[Headline, pd.DataFrame]]:
    """Every study's headline tables (:func:`headlines`) with their lines in ``record``."""
    return [(table, table.lines(record)) for table in headlines()]


def _hypotheses_line(record: Mapping) -> str:
    """The hypotheses in one paragraph: the families, their procedures and how many tests each marks."""
    counts = record["results"]["hypotheses"]
    families = counts["families"]
    parts = [
        f"{name} {f['tests']} test(s), {f['significant']} significant"
        + (f" ({f['procedure']})" if f["procedure"] else "")
        for name, f in families.items()
    ]
    return (
        f"Hypotheses (alpha {counts['alpha']:g}): " + "; ".join(parts) + ". Primary questions: Holm over the "
        "run's confirmatory family; every other marked test: Benjamini-Yekutieli over the whole report "
        "(results/hypotheses.parquet)."
    )


def headline(record: Mapping) -> str:
    """The run's headline numbers as Markdown tables, the answers to the primary questions first, with what
    their marks mean, after the warnings about scores of text a model cannot read."""
    parts = [f"WARNING: {w}.\n" for w in record["results"].get("warnings", [])]
    primary = primary_lines(record)
    if len(primary):
        answers = "".join(f"- {said}\n" for said in primary["answer"])
        parts.append(
            f"Answers, one per model and data set (the run's confirmatory family):\n\n{answers}\n"
            f"Primary questions: the estimate that answers each with the {level(1 - record_alpha(record))} "
            "interval of its test, its p and Holm-adjusted p (* significant).\n\n"
            + to_markdown(primary.drop(columns=["answer"]))  # the answers above, the table of their numbers
            + "\n"
            + _hypotheses_line(record)
            + "\n"
        )
    for table, lines in headline_tables(record):
        if len(lines):
            parts.append(table.caption + "\n\n" + to_markdown(lines))
    return "\n".join(parts) if parts else "No headline numbers: the run scored no model.\n"
