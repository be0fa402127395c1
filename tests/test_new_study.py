"""docs/architecture.md's recipe for a new study, carried out: a study that scores minimal pairs of its own
with a model (sentences about an occupation with the pronoun its stereotype expects and with the other)
is added to a copy of the project as one package (its plan, its jobs, its part of the record, of
``plmfair show`` and of ``plmfair compare``, and its part of the configuration's schema, which registers
it), its rule file and its tests: no file of the checkout is edited. Two runs of it (two tiny models of one
name) then reach the run record (validated against the schema with its part), ``plmfair show``, ``plmfair
compare`` and ``plmfair verify``, and a lost result is rebuilt. If an extension point regresses (a study name in a
switch, a rule file the Snakefile must name, a registry, record or schema part to extend by hand), this fails."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import CORES

pytestmark = pytest.mark.e2e

NEW_FILES = {
    "src/plmfair/occupations/__init__.py": '''
        """Occupation pairs: each sentence about an occupation twice, with the pronoun its stereotype expects
        (``sent_more``) and with the other (``sent_less``). Does a model prefer the stereotyped one?"""

        from __future__ import annotations

        from plmfair.rendering.table_spec import FigureSpec, TableSpec
        from plmfair.scoring.model_settings import spec_of, study_models
        from plmfair.studies import (PAIRS_TASK, ComparePart, RecordPartModule, Study, StudyData, StudyOutputs,
                                     StudyRecord, StudyScoring, StudyWorkflow, enabled)

        DATA = "results/data/occupations/{dataset}.parquet"
        SCORES = "results/occupations/{dataset}/{model}.parquet"
        SUMMARY = "results/occupations/summary.parquet"


        def datasets(config: dict) -> list[str]:
            return list(config["datasets"]["occupations"]) if enabled(config, "occupations") else []


        def dataset_entry(config: dict, dataset: str) -> dict:
            return config["datasets"]["occupations"][dataset]


        def languages(config: dict, study: str) -> list[str]:
            return sorted({dataset_entry(config, d)["lang"] for d in datasets(config)})


        def jobs(config: dict) -> list[dict]:
            """Each model on each data set of a language it covers, with its scores' path."""
            return [
                {"dataset": d, "model": m, "scores": SCORES.format(dataset=d, model=m)}
                for d in datasets(config)
                for m in study_models(config, "occupations")
                if spec_of(config, m).runs_on(dataset_entry(config, d)["lang"])
            ]


        def scored(config: dict) -> list[tuple[str, str]]:
            return [(job["model"], job["scores"]) for job in jobs(config)]


        def recorded(config: dict) -> list[str]:
            return [SUMMARY] if jobs(config) else []


        def ingested(config: dict) -> dict[str, str]:
            return {d: DATA.format(dataset=d) for d in datasets(config)}


        def published(config: dict) -> list[str]:
            return [*ingested(config).values(), *(path for _, path in scored(config)), *recorded(config)]


        TABLE = TableSpec("occupations", "occupations", "plmfair.rendering.table_format:long_table", {"table": SUMMARY},
                          "Pairs whose stereotyped sentence wins, per data set and model, with an exact binomial test.")
        FIGURE = FigureSpec("occupations_share", "occupations", "plmfair.occupations.jobs:share_figure",
                            {"summary": SUMMARY}, "Pairs whose stereotyped sentence wins, per model.", "share")
        def record_module() -> RecordPartModule:
            from plmfair.occupations import record  # pandas and scipy: loaded when the record is written
            return record


        def compare_module() -> ComparePart:
            from plmfair.occupations import record
            return record


        STUDY = Study(
            name="occupations", title="Occupation pairs", task=PAIRS_TASK,
            data=StudyData(described="CSV files of occupation pairs", downloads={"datasets.occupations": datasets},
                           ingested=ingested),
            workflow=StudyWorkflow(rules=("occupations_ingest", "occupations_score", "occupations_summary"),
                                   files=("occupations.smk",)),
            scoring=StudyScoring(languages=languages, scored=scored),
            outputs=StudyOutputs(folders=("results/data/occupations/", "results/occupations/"),
                                 subjects={"occupations": lambda config: [""] if jobs(config) else []},
                                 published=published, tables=(TABLE,), figures=(FIGURE,)),
            record=StudyRecord(recorded=recorded, part=record_module), compare=compare_module)
        ''',
    "src/plmfair/occupations/jobs.py": '''
        """Its jobs, library job functions its rules name: read a file of pairs, score it with a model
        (Nangia et al.'s pseudo-log-likelihood), and the share of pairs whose stereotyped sentence wins."""

        from __future__ import annotations

        import pandas as pd
        from scipy import stats

        from plmfair.errors import DataError
        from plmfair.io.parquet import read_parquet, write_parquet

        PAIRS = {"occupation": "the occupation", "sent_more": "with the stereotyped pronoun",
                 "sent_less": "with the other"}
        SCORES = {"occupation": "the occupation", "more": "pseudo-log-likelihood of sent_more",
                  "less": "of sent_less", "stereotyped": "more beyond less by more than its floating-point tolerance"}
        SUMMARY = {"dataset": "the data set", "model": "the model", "pairs": "pairs scored",
                   "stereotyped": "pairs whose stereotyped sentence wins", "share": "their %",
                   "ci_low": "Clopper-Pearson 95% interval, lower end", "ci_high": "its upper end",
                   "p_value": "exact binomial test against 50%"}


        def ingest(*, raw: str, pairs: str) -> None:
            table = pd.read_csv(raw)
            missing = sorted(set(PAIRS) - set(table.columns))
            if missing:
                raise DataError(f"{raw}: no column {missing}; a pair file has the columns {', '.join(PAIRS)}")
            write_parquet(df=table[list(PAIRS)], path=pairs, schema_doc=PAIRS)


        def score(*, pairs: str, model: str, scores: str, entry: dict, threads: int) -> None:
            # torch and transformers: only the scoring job loads a model
            from plmfair.scoring.base import MinimalPair
            from plmfair.scoring.loader import load
            from plmfair.scoring.pair_decision import decide_pairs
            from plmfair.scoring.specs import spec_from_entry

            loaded = load(spec_from_entry(entry, manifest=model), device="cpu", threads=threads)
            table = read_parquet(pairs)
            minimal = [MinimalPair(m, s, True) for m, s in zip(table["sent_more"], table["sent_less"], strict=True)]
            # decided as every pair study decides: the floating-point tolerance, the fp32 check of reduced precision
            decided, _ = decide_pairs(minimal, loaded.scorer(progress=False), protocol="nangia", loaded=loaded)
            out = table[["occupation"]].assign(more=decided["sent_more_score"], less=decided["sent_less_score"])
            out["stereotyped"] = decided["biased"]
            write_parquet(df=out, path=scores, schema_doc=SCORES, meta=loaded.metadata(protocol="nangia"))


        def summarise(*, scores: list[str], summary: str, runs: list[dict]) -> None:
            rows = []
            for run in runs:
                won = read_parquet(run["scores"])["stereotyped"]
                test = stats.binomtest(int(won.sum()), len(won))
                interval = test.proportion_ci(confidence_level=0.95, method="exact")
                rows.append({"dataset": run["dataset"], "model": run["model"], "pairs": len(won),
                             "stereotyped": int(won.sum()), "share": 100 * won.mean(),
                             "ci_low": 100 * interval.low, "ci_high": 100 * interval.high, "p_value": test.pvalue})
            write_parquet(df=pd.DataFrame(rows, columns=list(SUMMARY)), path=summary, schema_doc=SUMMARY)


        def share_figure(summary: pd.DataFrame, png: str, pdf: str) -> None:
            # matplotlib: only the figure job draws
            import matplotlib.pyplot as plt

            from plmfair.rendering.plots import save_figure

            fig, ax = plt.subplots(figsize=(4, 3))
            ax.bar(summary["model"], summary["share"])
            ax.axhline(50, linestyle="--", color="grey")
            ax.set_ylabel("stereotyped sentence wins (%)")
            save_figure(fig, png, pdf)
        ''',
    "src/plmfair/occupations/record.py": '''
        """Its part of the run record (``SCHEMA``, ``record_part``), of ``plmfair show`` (``HEADLINES``) and of
        ``plmfair compare`` (``KEY``, ``TITLE``, ``changes``, ``tests``, ``decided``, ``sections``): the same
        model in two runs compared pair by pair, an exact McNemar test of the pairs that changed side."""

        from __future__ import annotations

        from itertools import combinations

        import pandas as pd
        from scipy import stats

        from plmfair.errors import missing_result
        from plmfair.io.parquet import read_parquet
        from plmfair.occupations import SCORES
        from plmfair.rendering.record_rows import rows
        from plmfair.studies import Headline, RecordPart
        from plmfair.rendering.table_format import with_display

        FIELDS = ("dataset", "model", "pairs", "stereotyped", "share", "ci_low", "ci_high", "p_value")
        NUMBER = {"$ref": "#/$defs/number"}
        SCHEMA = {"occupations": {
            "type": "array", "description": "per data set and model, results/occupations/summary.parquet",
            "items": {"type": "object", "additionalProperties": False, "required": list(FIELDS), "properties": {
                "dataset": {"type": "string"}, "model": {"type": "string"}, "pairs": {"$ref": "#/$defs/count"},
                "stereotyped": {"$ref": "#/$defs/count"}, "share": NUMBER, "ci_low": NUMBER, "ci_high": NUMBER,
                "p_value": NUMBER}}}}


        def record_part(files, hypotheses) -> RecordPart:
            return RecordPart(rows={"occupations": [r for path in files for r in rows(read_parquet(path), FIELDS)]})


        def lines(record) -> pd.DataFrame:
            table = pd.DataFrame(record["results"]["occupations"], columns=list(FIELDS))
            return with_display(table, intervals={"interval": ("ci_low", "ci_high", 50.0)})


        HEADLINES = (Headline("occupations", "Occupation pairs: % of pairs whose stereotyped sentence wins, with the "
                              "95% interval of its exact binomial test (unadjusted)", "Occupation pairs", lines),)

        KEY = "occupation changes"
        TITLE = "Occupation pairs, did it move? Pairs that changed side between two runs, exact McNemar test"


        def sections(record) -> set[str]:
            return {"occupations"} if record["results"].get("occupations") else set()


        def _won(folder, run, dataset, model) -> pd.Series:
            path = folder / SCORES.format(dataset=dataset, model=model)
            if not path.is_file():
                raise missing_result(path, run, folder)
            return read_parquet(path)["stereotyped"]


        def changes(folders, records, *, alpha, source, other_models=False) -> pd.DataFrame:
            scored = {run: {(r["dataset"], r["model"]) for r in record["results"]["occupations"]}
                      for run, record in records.items()}
            out = []
            for first, second in combinations(records, 2):
                for dataset, model in sorted(scored[first] & scored[second]):
                    a, b = (_won(folders[run], run, dataset, model) for run in (first, second))
                    up, down = int((~a & b).sum()), int((a & ~b).sum())
                    out.append({"dataset": dataset, "model": model, "a": first, "b": second, "up": up, "down": down,
                                "hypothesis": f"{source}:occupations:{dataset}:{model}:{first}:{second}",
                                "p_value": stats.binomtest(up, up + down).pvalue if up + down else 1.0,
                                "p_min": min(1.0, 2 * 0.5 ** (up + down))})
            columns = ["dataset", "model", "a", "b", "up", "down", "hypothesis", "p_value", "p_min"]
            return pd.DataFrame(out, columns=columns)


        def tests(table) -> list[pd.DataFrame]:
            return [table[["hypothesis", "p_value", "p_min"]].assign(
                size=float("nan"), informative=(table["up"] + table["down"]) > 0, limit="")]


        def decided(table, hypotheses) -> pd.DataFrame:
            verdicts = hypotheses.set_index("hypothesis").reindex(table["hypothesis"])
            return table.assign(p_adjusted=verdicts["p_adjusted"].to_numpy(),
                                significant=verdicts["significant"].fillna(False).to_numpy(dtype=bool))
        ''',
    "src/plmfair/occupations/config.schema.yaml": """
        # Occupation pairs' part of the configuration, beside its code: its study and where it comes, its data
        # set kind (each entry a download and a language) and its section.
        x-studies: {occupations: STUDY}
        x-order: 3
        datasets:
          occupations:
            type: object
            default: {}
            additionalProperties:
              type: object
              additionalProperties: false
              required: [file, lang]
              properties:
                x-shared: download-fields
                lang: {type: string}
        properties:
          occupations:
            type: object
            default: {}
            additionalProperties: false
            properties:
              enabled: {type: boolean, default: true}
              models: {type: array}
        """,
    "workflow/rules/occupations.smk": """
        import plmfair.occupations as occupations


        rule occupations_ingest:
            input:
                raw=downloaded(occupations.dataset_entry, "dataset"),
            output:
                pairs=occupations.DATA,
            params:
                job="plmfair.occupations.jobs:ingest",
            log:
                "results/logs/ingest/occupations_{dataset}.log",
            resources:
                **sized("occupations_ingest"),
            conda:
                "../../envs/data.yaml"
            script:
                "../scripts/library_job.py"


        rule occupations_score:
            input:
                pairs=occupations.DATA,
                model=plan.MODEL_MANIFEST,
            output:
                scores=occupations.SCORES,
            params:
                job="plmfair.occupations.jobs:score",
                entry=from_plan(plan.model_loading, "model"),
            log:
                "results/logs/occupations/{dataset}/{model}.log",
            benchmark:
                "results/benchmarks/occupations/{dataset}/{model}.tsv"
            resources:
                **scoring_resources("occupations_score"),
            conda:
                "../../envs/models.yaml"
            script:
                "../scripts/library_job.py"


        rule occupations_summary:
            input:
                scores=[job["scores"] for job in occupations.jobs(config)],
            output:
                summary=occupations.SUMMARY,
            params:
                job="plmfair.occupations.jobs:summarise",
                runs=occupations.jobs(config),
            log:
                "results/logs/occupations/summary.log",
            resources:
                **sized("occupations_summary"),
            conda:
                "../../envs/stats.yaml"
            script:
                "../scripts/library_job.py"
        """,
    "tests/test_occupations.py": """
        import pytest

        from plmfair.errors import DataError
        from plmfair.occupations.jobs import ingest


        def test_a_file_without_its_columns_is_named(tmp_path):
            (tmp_path / "o.csv").write_text("occupation,text\\nnurse,She cares.\\n")
            with pytest.raises(DataError, match="o.csv: no column"):
                ingest(raw=str(tmp_path / "o.csv"), pairs=str(tmp_path / "o.parquet"))
        """,
}

# The edits: its line in the study registry, its config section.
PAIRS = (
    "occupation,sent_more,sent_less\n"
    "nurse,She said the nurse was kind.,He said the nurse was kind.\n"
    "engineer,He said the engineer was late.,She said the engineer was late.\n"
    "pilot,He flew the plane home.,She flew the plane home.\n"
    "teacher,She graded the tests all night.,He graded the tests all night.\n"
    "mechanic,He fixed the old car.,She fixed the old car.\n"
    "secretary,She typed the letters.,He typed the letters.\n"
)


def add_study(root: Path) -> list[str]:
    """The recipe's files, written into the copy at ``root``; the paths it touched."""
    for path, text in NEW_FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip())
    return list(NEW_FILES)


def copy_project(repo: Path, root: Path) -> None:
    """The checkout's tracked and unignored files (not the demo's data), as a clone would have them."""
    tracked = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for name in filter(None, tracked):
        if (repo / name).is_file() and not name.startswith(".test/data/"):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes((repo / name).read_bytes())


def test_a_new_study_that_scores_a_model_reaches_the_record_show_compare_and_verify(repo, tmp_path):
    root = tmp_path / "project"
    copy_project(repo, root)
    touched = add_study(root)
    print(f"a new study that scores a model: {len(touched)} files touched ({', '.join(touched)})")
    # one new package (its code and its part of the configuration's schema), its rule file and its tests: no
    # file of the checkout is edited (the registry finds the package by its schema part)
    assert len(touched) <= 8 and not [path for path in touched if (repo / path).exists()]
    assert len({Path(p).parent for p in touched if p.startswith("src/plmfair/occupations/")}) == 1
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "occupations_en.csv").write_text(PAIRS)
    env = {**os.environ, "PYTHONPATH": str(root / "src")}  # the copy's library, not the installed one

    def in_copy(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert not check or done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return done

    cli = ("-c", "import sys; from plmfair.cli import main; sys.exit(main())")

    def workflow(run: str, seed: int) -> Path:
        """``plmfair run`` of the study alone, its model a tiny BERT built with ``seed``."""
        entry = {"file": "occupations_en.csv", "sha256": hashlib.sha256(PAIRS.encode()).hexdigest(), "lang": "en"}
        model = {"family": "mlm", "build": {"kind": "bert", "vocab_size": 120, "seed": seed}}
        off = {"enabled": False}
        config = {"datasets": {"occupations": {"en": entry}}, "models": {"tiny_bert": model}}
        studies = {"occupations": {"models": ["tiny_bert"]}, "mozart": off, "crows_pairs": off, "cloze": off}
        (tmp_path / f"{run}.yaml").write_text(yaml.safe_dump({**config, **studies}))
        out = in_copy(
            *cli, "run", "--run", run, "--runs", str(tmp_path / "runs"), "--configfile", str(tmp_path / f"{run}.yaml"),
            "--mirror", str(mirror), "--cores", CORES,
        ).stdout  # fmt: skip
        assert "status: complete, verified" in out
        return tmp_path / "runs" / run

    first, second = workflow("first", 0), workflow("second", 1)
    # the record holds its summary, validated against the schema with the study's part
    record = json.loads((first / "results/run.json").read_text())
    summary = pd.read_parquet(first / "results/occupations/summary.parquet")
    assert record["results"]["occupations"] == summary.to_dict(orient="records")
    assert [m["name"] for m in record["models"]] == ["tiny_bert"] and record["models"][0]["protocol"] == "nangia"
    # its table and its figure, by the generic table and figure rules, among the files the record seals
    pd.testing.assert_frame_equal(pd.read_csv(first / "results/tables/occupations.csv"), summary, check_dtype=False)
    sealed = {f["path"] for f in record["files"]}
    assert {"results/figures/occupations_share.png", "results/tables/occupations.csv"} <= sealed
    assert (first / "results/figures/occupations_share.png").read_bytes()[:4] == b"\x89PNG"
    in_copy(
        "-c", f"from plmfair.runs.record import read_run_record; read_run_record({str(first / 'results/run.json')!r})"
    )
    broken = {**record, "results": {**record["results"], "occupations": [{"dataset": "en"}]}}
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    refused = in_copy(
        "-c", f"from plmfair.runs.record import validate_record; import json; "
        f"validate_record(json.load(open({str(tmp_path / 'broken.json')!r})))", check=False,
    )  # fmt: skip
    assert "run record at results/occupations/0" in refused.stderr

    shown = in_copy(*cli, "show", str(first)).stdout
    assert "Occupation pairs: % of pairs whose stereotyped sentence wins" in shown and "tiny_bert" in shown
    compared = json.loads(in_copy(*cli, "compare", str(first), str(second), "--format", "json").stdout)
    (change,) = compared["occupation changes"]
    assert (change["dataset"], change["model"], change["a"], change["b"]) == ("en", "tiny_bert", "first", "second")
    first_won = pd.read_parquet(first / "results/occupations/en/tiny_bert.parquet")["stereotyped"]
    second_won = pd.read_parquet(second / "results/occupations/en/tiny_bert.parquet")["stereotyped"]
    assert (change["up"], change["down"]) == (
        int((~first_won & second_won).sum()),
        int((first_won & ~second_won).sum()),
    )
    assert change["hypothesis"] in {row["hypothesis"] for row in compared["hypotheses"]}
    assert "Occupation pairs, did it move?" in in_copy(*cli, "compare", str(first), str(second)).stdout
    in_copy(*cli, "verify", str(first))

    # a lost result is rebuilt by the next run, and the run verifies again
    lost = first / "results/occupations/en/tiny_bert.parquet"
    lost.unlink()
    assert in_copy(*cli, "verify", str(first), check=False).returncode != 0
    workflow("first", 0)
    assert lost.is_file() and pd.read_parquet(lost)["stereotyped"].equals(first_won)
    in_copy(*cli, "verify", str(first))

    # its own test and the registry's tests (rules = its record's jobs, no study name in a switch), in the copy
    in_copy(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "tests/test_occupations.py",
        "tests/plan/test_plan.py::test_the_registry_lists_every_study_job_output_table_and_figure",
        "tests/plan/test_plan.py::test_no_study_name_in_a_string_comparison_outside_the_registry",
        "tests/test_resources.py::test_every_rule_declares_its_memory_and_run_time_from_its_input",
    )  # fmt: skip
    category = in_copy("-c", "from plmfair import plan; print(plan.report_category('occupations'))").stdout
    assert category.strip() == "Occupation pairs"
