"""Shared fixtures: repository paths, the optional real data folder, demo files, and the one demo
run of the session.

End-to-end tests share one run of the demo (``demo_run``: the demo configuration plus the bitext
corpus of .test/config/bitext.yaml), made read-only once it has run. A test that runs Snakemake
on it works on a copy that keeps every timestamp (``demo_copy``: ``cp -a``), so no test depends
on another's order. Tests that run Snakemake are marked ``e2e`` (``pytest -m "not e2e"`` leaves
them out for a fast edit loop).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

# Under `make test` the tests run on several processes (pytest-xdist): each process, and the Snakemake
# runs and jobs it starts, computes on one thread (torch, OpenMP, BLAS), so that the processes share the
# cores instead of each spinning threads for all of them.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

# ... and each Snakemake run of a test runs one job at a time: the processes together keep the cores busy.
CORES = "1" if os.environ.get("PYTEST_XDIST_WORKER") else "2"

REPO = Path(__file__).resolve().parents[1]
DEMO_DATA = REPO / ".test" / "data"
DEMO_CONFIGS = (REPO / ".test" / "config" / "config.yaml", REPO / ".test" / "config" / "bitext.yaml")
# the fault, CLI, citation and new-study cases' configuration: one pair study on 16 pairs, one tiny model
TINY = REPO / ".test" / "config" / "tiny.yaml"


def tiny_config(folder: Path, **models: Path) -> Path:
    """The tiny configuration (:data:`TINY`) for a case that brings its own models, written into ``folder``:
    the local masked LMs ``models`` (name -> folder) scored by its study; with none, no model and no model
    list, so that the models named on the command line are the run's and a later call that passes the file
    again keeps them."""
    import yaml

    config = yaml.safe_load(TINY.read_text())
    config["models"] = {name: {"path": str(path), "family": "mlm"} for name, path in models.items()}
    if models:
        config["crows_pairs"]["models"] = list(models)
    else:
        del config["crows_pairs"]["models"]
    path = folder / f"tiny_{'_'.join(models) or 'models_named_on_the_command_line'}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


BIN = Path(sys.executable).parent
# the tests use plmfair as the README's set-up leaves it, its virtual environment active: `plmfair` on PATH, so
# that the commands it prints start with the bare name (tests/test_cli.py checks the form it prints without)
if shutil.which("plmfair") != str(BIN / "plmfair"):
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"


def snakemake(
    workdir: Path,
    *args: str,
    configfiles=DEMO_CONFIGS,
    mirror: Path | None = DEMO_DATA,
    check: bool = True,
    env: dict | None = None,
    timeout: int = 900,
) -> subprocess.CompletedProcess:
    """Snakemake's command line on ``workdir`` with the demo's profile (.test/profile: scoring jobs
    side by side on the CPU), ``CORES`` cores, ``configfiles`` and the ``mirror``; ``args`` go before
    ``--config``. Fails the test with the end of the log unless ``check`` is off."""
    cmd = [
        str(BIN / "snakemake"),
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--workflow-profile",
        str(REPO / ".test" / "profile"),
        "--cores",
        CORES,
        *args,
        "--configfile",
        *map(str, configfiles),
    ]
    if mirror is not None:
        cmd += ["--config", f"mirror={mirror}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


def planned(
    workdir: Path,
    *targets: str,
    configfiles=DEMO_CONFIGS,
    mirror: Path | None = DEMO_DATA,
) -> list[tuple[str, str]]:
    """(rule, wildcards) of every job a dry run on ``workdir`` plans (as :func:`dry_run_jobs` reads them off
    its output), planned in this process through Snakemake's API: a dry run of a test costs its DAG, not a
    Snakemake start of seconds. (A run that should fail, or one in another environment, goes through
    :func:`snakemake`.)"""
    import logging

    from snakemake.api import SnakemakeApi
    from snakemake.logging import logger
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings
    from snakemake_interface_logger_plugins.common import LogEvent

    jobs: list[tuple[str, str]] = []

    class Planned(logging.Handler):
        def emit(self, record):
            if getattr(record, "event", None) == LogEvent.JOB_INFO:
                wildcards = getattr(record, "wildcards", None) or {}
                jobs.append((record.rule_name, ", ".join(f"{k}={v}" for k, v in wildcards.items())))

    handler = Planned()
    with SnakemakeApi(OutputSettings(dryrun=True, quiet={Quietness.ALL})) as api:
        logger.addHandler(handler)
        try:
            workflow = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(
                    configfiles=[Path(f) for f in configfiles], config={"mirror": str(mirror)} if mirror else {}
                ),
                snakefile=REPO / "Snakefile",
                workdir=Path(workdir),
            )
            workflow.dag(DAGSettings(targets=set(targets))).execute_workflow(pseudo_executor="dryrun")
        finally:
            logger.removeHandler(handler)
    return jobs


def outputs_under_hash_seeds(code: str, *args: str, out: Path, seeds=("1", "2")) -> list[Path]:
    """Run the Python ``code`` once per PYTHONHASHSEED in ``seeds`` (Python's string hashing, which
    changes from process to process), with ``args`` and then the seed's output path (``out`` with the
    seed in its name) as arguments; the output paths, one per seed."""
    outputs = []
    for seed in seeds:
        path = out.with_name(f"{out.stem}_seed{seed}{out.suffix}")
        proc = subprocess.run(
            [sys.executable, "-c", code, *args, str(path)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        outputs.append(path)
    return outputs


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory, worker_id) -> Path:
    """The demo run of the session (read-only: use ``demo_copy`` to run Snakemake on it), made once
    even when the tests run on several processes (pytest-xdist): the first to need it runs it under a
    lock, the others wait for it and read it."""
    # one process: a folder of its own; several: the session's folder, above every worker's own
    root = tmp_path_factory.mktemp("shared") if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    work, done = root / "demo_run", root / "demo_run.done"
    with FileLock(str(root / "demo_run.lock")):
        if not done.exists():
            work.mkdir(exist_ok=True)
            snakemake(work)
            subprocess.run(["chmod", "-R", "a-w", str(work)], check=True)
            done.touch()
    return work


@pytest.fixture
def demo_copy(demo_run, tmp_path) -> Path:
    """A writable copy of the session's demo run with every timestamp kept (Snakemake sees it as
    up to date)."""
    copy = tmp_path / "demo"
    subprocess.run(["cp", "-a", str(demo_run), str(copy)], check=True)
    subprocess.run(["chmod", "-R", "u+w", str(copy)], check=True)
    return copy


# How `make test` shares the tests between its processes (pytest-xdist, --dist loadfile
# --no-loadscope-reorder): a test file stays on one process (its module fixtures are made once), and
# the files that take longest go first, longest first (those that run Snakemake many times, then the
# statistics' simulations and the model tests), so that the last files handed out are quick ones and
# the processes end together; within the rest, the order stays pytest-randomly's.
HEAVY_FIRST = (
    "test_workflow.py",
    "test_hostile.py",
    "test_cli.py",
    "test_benchmarks.py",
    "test_group_tests.py",
    "test_crows_pairs.py",
    "test_hub.py",
    "test_tiny_models.py",
    "test_scoring.py",
    "test_pos.py",
    "test_new_study.py",
    "test_report_browser.py",
)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    unmarked = [item.nodeid for item in items if RUNS_FIXTURES & set(item.fixturenames) and not _e2e(item)]
    if unmarked:
        raise pytest.UsageError(f"these tests read a Snakemake run but are not marked e2e: {', '.join(unmarked)}")
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


# ---- every test that runs Snakemake is marked e2e (`pytest -m "not e2e"` runs none): one that uses a run
# fixture is refused at collection, and one that starts Snakemake, or a plmfair run, fails

RUNS_FIXTURES = {"demo_run", "demo_copy", "two_runs"}


def _e2e(item) -> bool:
    return item.get_closest_marker("e2e") is not None


def _starts_snakemake(args) -> bool:
    words = [os.fspath(w) for w in ([args] if isinstance(args, (str, bytes, os.PathLike)) else args)]
    if words and isinstance(words[0], str) and " " in words[0] and len(words) == 1:
        words = words[0].split()  # a shell command line
    names = [Path(str(w)).name for w in words[:3]]
    return bool(names) and (names[0] == "snakemake" or names[:2] == ["plmfair", "run"] or "snakemake" in names[1:3])


@pytest.fixture(autouse=True)
def _snakemake_only_in_e2e_tests(request, monkeypatch):
    if _e2e(request.node):
        return
    started = subprocess.Popen.__init__

    def refused(self, args, *rest, **options):
        if _starts_snakemake(args):
            pytest.fail(f"{request.node.nodeid} starts Snakemake ({args!r:.200}): mark it e2e (pytest.mark.e2e)")
        started(self, args, *rest, **options)

    monkeypatch.setattr(subprocess.Popen, "__init__", refused)


def _shared_data() -> Path | None:
    env = os.environ.get("PLMFAIR_SHARED_DATA")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if cand.is_dir():
            return cand
    return None


SHARED_DATA = _shared_data()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """The tests' one way to a tiny model: ``tiny_model(kind, texts, into=None, **options)`` is the folder
    of :func:`plmfair_demo.build_tiny_model` with those options (vocab_size, seed, max_length, ...), built
    once a session for each recipe and copied for each call (into ``into`` when given), so a test may change
    its copy. (tests/scoring/test_tiny_models.py tests the builder itself.)"""
    from plmfair_demo import build_tiny_model

    root, built, copies = tmp_path_factory.mktemp("tiny_models"), {}, itertools.count()

    def make(kind: str, texts, into: str | os.PathLike | None = None, **options) -> Path:
        texts = list(texts)
        recipe = (kind, tuple(texts), tuple(sorted((key, repr(value)) for key, value in options.items())))
        if recipe not in built:
            built[recipe] = Path(build_tiny_model(kind, texts, root / f"recipe_{len(built)}", **options))
        out = Path(into) if into is not None else root / f"{kind}_{next(copies)}"
        shutil.copytree(built[recipe], out)
        return out

    return make


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def demo_data() -> Path:
    return DEMO_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real data sets (../shared/data or $PLMFAIR_SHARED_DATA); tests using it skip without it."""
    if SHARED_DATA is None:
        pytest.skip("real data not available: set PLMFAIR_SHARED_DATA or place it at ../shared/data")
    return SHARED_DATA


# a rule of a rule file: named (`rule NAME:`, at the top or inside a condition), or defined in a loop (`rule:`,
# then `name:` and its expression, `f"{job}_tables"` or `"crows_pairs_pass_score" + ...`), up to the next rule
RULE = re.compile(
    r"^\s*rule(?: (\w+):|:\n\s+name:\n\s+(?:f\"\{\w+\}_|\")(\w+)\"[^\n]*)\n(.*?)(?=^\s*rule[ :]|\Z)",
    flags=re.M | re.S,
)


def rule_bodies(text: str) -> dict[str, str]:
    """Each rule's body by its name; the rules a loop defines by the name they share (``tables``,
    ``crows_pairs_pass_score``)."""
    return {named or looped: body for named, looped, body in RULE.findall(text)}


def dry_run_jobs(stdout: str) -> list[tuple[str, str]]:
    """(rule, wildcards) of every job a Snakemake dry run plans ('' for a job without wildcards);
    rules, localrules and the members of group jobs (printed indented) alike."""
    jobs: list[tuple[str, str]] = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith(("rule ", "localrule ")) and line.endswith(":"):
            jobs.append((line.split()[1].rstrip(":"), ""))
        elif line.startswith("wildcards:") and jobs and not jobs[-1][1]:
            jobs[-1] = (jobs[-1][0], line.removeprefix("wildcards:").strip())
    return jobs


# ---- the demo cloze corpus in memory (tests of the construction and of the annotation sheets)

CLOZE_LANGS = ("en", "de", "es", "fr")


@pytest.fixture(scope="session")
def demo_corpus(demo_data, tmp_path_factory):
    """The synthetic four-way demo corpus tagged by lookup pipelines built here, with its gold alignments."""
    from plmfair.cloze.construction.alignment import links_frame, parse_pharaoh
    from plmfair.cloze.construction.pos import (
        build_lexicon_pipeline,
        load_pipeline,
        read_lexicon,
        tag_lines,
    )
    from plmfair.io.text_files import read_text_lines

    root = demo_data / "cloze"
    tokens, lines = {}, {}
    for lang in CLOZE_LANGS:
        out = tmp_path_factory.mktemp(f"spacy_{lang}")
        build_lexicon_pipeline(lang, read_lexicon(root / f"lexicon_{lang}.tsv"), out / "nlp")
        lines[lang], _ = read_text_lines(root / f"cloze_demo.{lang}")
        tokens[lang], _ = tag_lines(load_pipeline(out / "nlp", lang), lines[lang], tokenized=True)
    aligns = {
        lang: links_frame(parse_pharaoh(read_text_lines(root / f"cloze_demo.en-{lang}.align")[0], source=f"en-{lang}"))
        for lang in CLOZE_LANGS[1:]
    }
    return tokens, aligns, len(lines["en"])


def construct_in_memory(demo_corpus, **kw):
    """The demo corpus's cloze sentences and counts, constructed in memory with every line tagged: the
    reference that the streamed construction (plmfair.cloze.construct_files) is checked against."""
    tokens, aligns, n_lines = demo_corpus
    args = {
        "pivot": "en",
        "n_lines": n_lines,
        "corpus": "demo",
        "filters": {"min_tokens": 4, "max_tokens": 30},
        "n": 8,
        "seed": 7,
        **kw,
    }
    return construct(tokens, aligns, **args)


def construct(tokens, alignments, *, pivot, n_lines, corpus, filters, n, seed, examine="as_needed", batch_lines=2000):
    """Sentences and counts of one corpus held in memory, its tokens tagged in full; what
    plmfair.cloze.construct_files does on files, tagging only the lines it examines."""
    import pandas as pd

    from plmfair.cloze.construction.filters import DEFAULT_FILTERS, lexical_candidates
    from plmfair.cloze.construction.pos import TAGS_SCHEMA
    from plmfair.cloze.construction.selection import cloze_sentences_from_sample, select_sample, verify_sentences

    f = {**DEFAULT_FILTERS, **(filters or {})}
    langs = [pivot] + [lang for lang in tokens if lang != pivot]
    lexical, counts = lexical_candidates(
        tokens, alignments, pivot=pivot, lines=range(1, n_lines + 1), corpus=corpus, filters=f
    )

    def tag(lines):
        return {lang: t.loc[t["line"].isin(lines), list(TAGS_SCHEMA)] for lang, t in tokens.items()}

    sample, selected = select_sample(
        lexical,
        tag,
        pivot=pivot,
        langs=langs,
        corpus=corpus,
        filters=f,
        n=n,
        seed=seed,
        examine=examine,
        batch_lines=batch_lines,
    )
    sentences = cloze_sentences_from_sample(sample, tokens, pivot=pivot, corpus=corpus)
    verify_sentences(sentences, tokens, alignments, pivot=pivot, pos=f["pos"])
    return sentences, pd.concat([counts, selected], ignore_index=True).astype({"count": "Int64"})
