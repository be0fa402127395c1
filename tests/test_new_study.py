"""docs/architecture.md's recipe for a study of another kind, carried out: a small study (sentence
lengths per group, read from a CSV file of its own) is added to a copy of the project as one package
(its record, jobs, plan and table), its rule file and its tests, plus its line in the study registry and
its schema section, and the workflow
downloads its data, runs its jobs, renders its table under its report category, and holds its rules
to its record. If an extension point regresses (a study name in a switch, a rule file the Snakefile
must name, a plan section to extend), this fails."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytestmark = pytest.mark.e2e

NEW_FILES = {
    "src/plmfair/sentence_lengths/__init__.py": '''
        """Sentence lengths per group: a study of sentences about groups of people, how long each is."""

        from __future__ import annotations

        from plmfair.sentence_lengths import outputs, plan
        from plmfair.studies import Study

        STUDY = Study(
            "sentence_lengths", "Sentence lengths", "sentence_lengths", False, "CSV files of sentences about groups",
            own_jobs=("sentence_lengths_ingest", "sentence_lengths_summary"), rules=("sentence_lengths.smk",),
            outputs=("results/data/sentence_lengths/", "results/sentence_lengths/"),
            subjects={"sentence_lengths": plan.outputs}, downloads={"datasets.sentence_lengths": plan.datasets},
            tables=outputs.TABLES)
        ''',
    "src/plmfair/sentence_lengths/lengths.py": '''
        """Its reader and its two jobs (library job functions, named by its rules)."""

        from __future__ import annotations

        from pathlib import Path

        import pandas as pd

        from plmfair.errors import DataError
        from plmfair.io.parquet import read_parquet, write_parquet

        SENTENCES_SCHEMA = {"group": "who the sentence is about", "sentence": "the sentence",
                            "words": "its words, split at white space"}
        SUMMARY_SCHEMA = {"dataset": "the data set", "group": "the group", "sentences": "its sentences",
                          "mean_words": "their mean length in words"}


        def read_sentences(path) -> pd.DataFrame:
            table = pd.read_csv(path)
            missing = sorted({"group", "sentence"} - set(table.columns))
            if missing:
                raise DataError(f"{path}: no column {missing}; a sentence file has the columns group, sentence")
            return table.assign(words=table["sentence"].str.split().str.len())


        def ingest(*, raw: str, sentences: str) -> None:
            write_parquet(df=read_sentences(raw), path=sentences, schema_doc=SENTENCES_SCHEMA)


        def summarise(*, sentences: list[str], summary: str) -> None:
            rows = pd.concat([read_parquet(path=p).assign(dataset=Path(p).stem) for p in sentences])
            table = (rows.groupby(["dataset", "group"], as_index=False)
                     .agg(sentences=("sentence", "size"), mean_words=("words", "mean")))
            write_parquet(df=table, path=summary, schema_doc=SUMMARY_SCHEMA)
        ''',
    "src/plmfair/sentence_lengths/plan.py": '''
        """Its jobs: which data sets are read, and its files."""

        from __future__ import annotations

        from plmfair.studies import enabled

        SUMMARY = "results/sentence_lengths/summary.parquet"


        def datasets(config: dict) -> list[str]:
            return list(config["datasets"]["sentence_lengths"]) if enabled(config, "sentence_lengths") else []


        def dataset_entry(config: dict, dataset: str) -> dict:
            return config["datasets"]["sentence_lengths"][dataset]


        def outputs(config: dict) -> list[str]:
            return [""] if datasets(config) else []
        ''',
    "src/plmfair/sentence_lengths/outputs.py": '''
        """Its table."""

        from plmfair.rendering.table_spec import TableSpec
        from plmfair.sentence_lengths.plan import SUMMARY

        TABLES = (TableSpec("sentence_lengths", "sentence_lengths", "plmfair.rendering.table_format:long_table",
                            {"table": SUMMARY}, "Sentences per group and their mean length in words, per data set."),)
        ''',
    "workflow/rules/sentence_lengths.smk": """
        import plmfair.sentence_lengths.plan as sentence_lengths_plan


        rule sentence_lengths_ingest:
            input:
                raw=downloaded(sentence_lengths_plan.dataset_entry, "sentence_file"),
            output:
                sentences="results/data/sentence_lengths/{sentence_file}.parquet",
            params:
                job="plmfair.sentence_lengths.lengths:ingest",
            log:
                "results/logs/ingest/sentence_lengths_{sentence_file}.log",
            resources:
                **sized("sentence_lengths_ingest"),
            conda:
                "../../envs/data.yaml"
            script:
                "../scripts/library_job.py"


        rule sentence_lengths_summary:
            input:
                sentences=expand("results/data/sentence_lengths/{name}.parquet",
                                 name=sentence_lengths_plan.datasets(config)),
            output:
                summary=sentence_lengths_plan.SUMMARY,
            params:
                job="plmfair.sentence_lengths.lengths:summarise",
            log:
                "results/logs/sentence_lengths/summary.log",
            resources:
                **sized("sentence_lengths_summary"),
            conda:
                "../../envs/stats.yaml"
            script:
                "../scripts/library_job.py"
        """,
    "tests/test_sentence_lengths.py": """
        import pytest

        from plmfair.errors import DataError
        from plmfair.sentence_lengths.lengths import read_sentences


        def test_a_file_without_its_columns_is_named(tmp_path):
            (tmp_path / "s.csv").write_text("who,text\\nwomen,They work.\\n")
            with pytest.raises(DataError, match="s.csv: no column"):
                read_sentences(tmp_path / "s.csv")
        """,
}

# The edits: its line in the study registry, its config section.
RECORD = '\nSTUDIES.register("sentence_lengths", "plmfair.sentence_lengths:STUDY")\n'
SENTENCES = "group,sentence\nwomen,They lead the team.\nwomen,She wrote it.\nmen,He cooks dinner for everyone.\n"


def add_study(root: Path) -> list[str]:
    """The recipe's files, written into the copy at ``root``; the paths it touched."""
    for path, text in NEW_FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip())
    with open(root / "src/plmfair/studies.py", "a", encoding="utf-8") as fh:
        fh.write(RECORD)
    schema_path = root / "workflow/schemas/config.schema.yaml"
    schema = yaml.safe_load(schema_path.read_text())
    # its download entries take the fields every data set entry has (the schema's x-download-fields)
    download = {
        "type": "object",
        "additionalProperties": False,
        "required": ["file"],
        "properties": schema["x-download-fields"],
    }
    schema["properties"]["datasets"]["properties"]["sentence_lengths"] = {
        "type": "object",
        "default": {},
        "additionalProperties": download,
    }
    schema["properties"]["sentence_lengths"] = {
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "properties": {"enabled": {"type": "boolean", "default": True}},
    }
    schema_path.write_text(yaml.safe_dump(schema, sort_keys=False, allow_unicode=True))
    return [*NEW_FILES, "src/plmfair/studies.py", "workflow/schemas/config.schema.yaml"]


def test_a_study_of_another_kind_is_one_package_and_three_edits(repo, tmp_path):
    root = tmp_path / "project"
    tracked = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for name in filter(None, tracked):
        if (repo / name).is_file() and not name.startswith(".test/data/"):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes((repo / name).read_bytes())
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "lengths_en.csv").write_text(SENTENCES)
    touched = add_study(root)
    # one new package (4 files), its rule file and its tests; its registry line and its schema section
    assert (
        len(touched) == 8
        and len({Path(p).parent for p in touched if p.startswith("src/plmfair/sentence_lengths/")}) == 1
    )
    (tmp_path / "run.yaml").write_text(
        yaml.safe_dump(
            {
                "mirror": str(mirror),
                "datasets": {
                    "sentence_lengths": {
                        "en": {"file": "lengths_en.csv", "sha256": hashlib.sha256(SENTENCES.encode()).hexdigest()}
                    }
                },
                "mozart": {"enabled": False},
                "crows_pairs": {"enabled": False},
                "cloze": {"enabled": False},
            }
        )
    )
    # the copy's library, not the installed one
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "results/tables/sentence_lengths.csv",
            "results/tables/sentence_lengths.html",
            "--snakefile",
            str(root / "Snakefile"),
            "--directory",
            str(tmp_path / "work"),
            "--cores",
            "1",
            "--configfile",
            str(tmp_path / "run.yaml"),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    table = pd.read_csv(tmp_path / "work/results/tables/sentence_lengths.csv")
    assert table.to_dict("records") == [
        {"dataset": "en", "group": "men", "sentences": 1, "mean_words": 5.0},
        {"dataset": "en", "group": "women", "sentences": 2, "mean_words": 3.5},
    ]
    # its own test, the registry's tests (rules = its record's jobs, no study name in a switch) and the
    # report category, in the copy
    checks = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_sentence_lengths.py",
            "tests/test_plan.py::test_the_registry_lists_every_study_job_output_table_and_figure",
            "tests/test_plan.py::test_no_study_name_in_a_string_comparison_outside_the_registry",
            "tests/test_resources.py::test_every_rule_declares_its_memory_and_run_time_from_its_input",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert checks.returncode == 0, checks.stdout[-3000:]
    category = subprocess.run(
        [sys.executable, "-c", "from plmfair import plan; print(plan.report_category('sentence_lengths'))"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert category == "Sentence lengths"
