"""Faults a run meets, driven through Snakemake: a broken model, a job killed mid-run, a second
run in the same folder, a study switched off, weights replaced under a finished run.

Every case must end in one line that names the file, row or key and says what to do (or a
counted skip, or a correct result), and leave no output that looks valid. The malformed-input
cases of each reader are tables in that module's tests (test_data, test_config, test_loader, ...).
"""

from __future__ import annotations

import difflib
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest
import yaml
from conftest import BIN, CORES, DEMO_DATA, REPO, TINY, planned, snakemake, tiny_config
from safetensors.torch import load_file, save_file

pytestmark = pytest.mark.e2e

TEXTS = ["The members of the committee met on Monday.", "Les membres de la commission se sont réunis."] * 5


@pytest.fixture(scope="module")
def bert(tiny_model) -> Path:
    return tiny_model("bert", TEXTS, vocab_size=300)


def copy_model(model: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-a", str(model), str(dest)], check=True)
    return dest


def small_config(tmp_path: Path, **models: Path) -> Path:
    """The tiny configuration with local masked LMs for its model (:func:`conftest.tiny_config`)."""
    return tiny_config(tmp_path, **models)


SUMMARY = "results/crows_pairs/summary.parquet"


def command(work: Path, configfile: Path, *targets: str) -> list[str]:
    """The demo's command line on ``work`` for ``targets`` (the --config item comes last)."""
    return [
        str(BIN / "snakemake"),
        *targets,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(work),
        "--workflow-profile",
        str(REPO / ".test" / "profile"),
        "--cores",
        CORES,
        "--configfile",
        str(configfile),
        "--config",
        f"mirror={DEMO_DATA}",
    ]


def test_a_broken_model_stops_its_job_with_one_line(bert, tmp_path):
    model = copy_model(bert, tmp_path / "encoder_only")
    state = load_file(model / "model.safetensors")
    save_file(
        {k: v for k, v in state.items() if not k.startswith("cls.")},
        model / "model.safetensors",
        metadata={"format": "pt"},
    )
    work = tmp_path / "work"
    proc = snakemake(
        work,
        "results/crows_pairs/tiny_fr/local.parquet",
        configfiles=(small_config(tmp_path, local=model),),
        check=False,
    )
    assert proc.returncode != 0
    log = (work / "results/logs/crows_pairs/tiny_fr/local.log").read_text()
    assert "model 'local'" in log and "the checkpoint lacks 6 tensor(s)" in log and "Traceback" not in log
    assert not (work / "results/crows_pairs/tiny_fr/local.parquet").exists()


def scoring_job(run: subprocess.Popen, script: str, timeout: float = 300) -> psutil.Process | None:
    """The job of ``script`` among the processes ``run`` started (and only those)."""
    deadline = time.time() + timeout
    parent = psutil.Process(run.pid)
    while time.time() < deadline and run.poll() is None:
        for child in parent.children(recursive=True):
            try:
                if any(arg.endswith(script) for arg in child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.1)
    return None


def test_kill_mid_run_then_rerun_and_a_second_run_in_the_same_directory(bert, tmp_path):
    work = tmp_path / "work"
    target = "results/crows_pairs/tiny_fr/local.parquet"
    cmd = command(work, small_config(tmp_path, local=bert), target)
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    job = scoring_job(first, "crows_pairs_score.py")
    if job is None:
        first.kill()
        pytest.fail(f"the scoring job did not start:\n{first.communicate()[0][-3000:]}")
    # a second run in the same directory is refused while the first holds the lock
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode != 0 and "Directory cannot be locked" in second.stdout + second.stderr
    job.send_signal(signal.SIGKILL)
    first.communicate(timeout=300)
    assert first.returncode != 0
    out = work / target
    assert not out.exists() and not list(out.parent.glob(".local.parquet.*"))
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    scores = pd.read_parquet(out)
    assert len(scores) == 16 and (scores["status"] == "ok").sum() >= 10  # a missing and an identical pair among them


def test_a_study_switched_off_by_a_configfile_really_goes(tmp_path):
    off = tmp_path / "off.yaml"
    off.write_text("cloze:\n  enabled: false\nmozart:\n  enabled: false\n")
    default = (REPO / "config" / "config.yaml", off)
    jobs = "\n".join(map(" ".join, planned(tmp_path / "w", configfiles=default, mirror=None)))
    assert "wmt13-dev.tgz" not in jobs and "MozArt.zip" not in jobs
    assert "cloze_" not in jobs
    assert "crows_pairs_score" in jobs


def planned_after(work: Path, configfile: Path, *targets: str) -> list[str]:
    """'rule wildcards' of every job a dry run of ``targets`` on ``work`` plans (:func:`conftest.planned`)."""
    return [f"{rule} {wildcards}".strip() for rule, wildcards in planned(work, *targets, configfiles=(configfile,))]


def test_replacing_a_local_models_weights_reruns_exactly_its_jobs(bert, tmp_path):
    first, second = copy_model(bert, tmp_path / "first"), copy_model(bert, tmp_path / "second")
    work, config = tmp_path / "work", small_config(tmp_path, local=first, other=second)
    done = subprocess.run(command(work, config, SUMMARY), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert planned_after(work, config, SUMMARY) == []
    state = load_file(second / "model.safetensors")
    save_file({k: v + 0.01 for k, v in state.items()}, second / "model.safetensors", metadata={"format": "pt"})
    jobs = planned_after(work, config, SUMMARY)
    assert "model_manifest model=other" in jobs and "crows_pairs_score dataset=tiny_fr, model=other" in jobs
    assert not [job for job in jobs if "model=local" in job], jobs
    # what follows the scores reruns; no other model's job does
    assert {job.split()[0] for job in jobs} == {"model_manifest", "crows_pairs_score", "crows_pairs_summary"}


def test_a_bad_resource_override_stops_the_run_in_one_line(tmp_path):
    """`--set-threads crows_pairs_score=two` was a 55-line ResourceConstraintError from the scheduler."""
    proc = subprocess.run(
        [
            *command(tmp_path / "work", TINY),
            "-n",
            "--set-threads",
            "crows_pairs_score=two",
        ],
        capture_output=True,
        text=True,
    )
    said = [line for line in proc.stderr.splitlines() if line.startswith("plmfair:")]
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert said == [
        "plmfair: --set-threads crows_pairs_score=two: threads takes a whole number (or an expression of "
        "input, threads, attempt), e.g. --set-threads crows_pairs_score=4"
    ]


# ---- runs as a hostile user drives them: one name for other weights, lost and corrupt results, bad
# files and names, Ctrl-C. Each case: the command, its one line, the earlier run's files byte for byte.


def published(run: Path) -> dict[str, bytes]:
    """Every file of a run's results but its logs and Snakemake's benchmark files, by path."""
    return {
        p.relative_to(run).as_posix(): p.read_bytes()
        for p in sorted((run / "results").rglob("*"))
        if p.is_file() and p.relative_to(run / "results").parts[0] not in ("logs", "benchmarks")
    }


def plmfair(*words: str, cwd: Path, ok: bool = True, timeout: int = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(BIN / "plmfair"), *words], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert (proc.returncode == 0) == ok, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def said(proc: subprocess.CompletedProcess) -> list[str]:
    """plmfair's own lines on stderr; the case's output must hold no traceback."""
    assert "Traceback" not in proc.stdout + proc.stderr and "Uncaught exception" not in proc.stderr
    return [line for line in proc.stderr.splitlines() if line.startswith("plmfair:")]


def record_model(run: Path) -> dict:
    (model,) = json.loads((run / "results" / "run.json").read_text())["models"]
    return model


@pytest.fixture(scope="module")
def two_runs(bert, tmp_path_factory) -> dict:
    """Run h2 scores tb=<folder A>, run h4 tb=<folder B> (other weights), on the tiny configuration."""
    base = tmp_path_factory.mktemp("two_runs")
    a, b = copy_model(bert, base / "A"), copy_model(bert, base / "B")
    state = load_file(b / "model.safetensors")
    save_file({k: v * 1.5 for k, v in state.items()}, b / "model.safetensors", metadata={"format": "pt"})
    places = [
        "--runs",
        str(base / "runs"),
        "--resources",
        str(base / "resources"),
        "--mirror",
        str(DEMO_DATA),
        "--cores",
        CORES,
        "--configfile",
        str(tiny_config(base)),
    ]
    plmfair("run", f"tb={a}", "--run", "h2", *places, cwd=base)
    plmfair("run", f"tb={b}", "--run", "h4", *places, cwd=base)
    return {"base": base, "A": a, "B": b, "places": places}


def run_copy(two_runs: dict, tmp_path: Path) -> tuple[Path, list[str]]:
    """A copy of the two runs (every time kept) for a test that changes them, and its places."""
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(two_runs["base"]), str(copy)], check=True)
    places = [w.replace(str(two_runs["base"]), str(copy)) for w in two_runs["places"]]
    for run in (copy / "runs").iterdir():  # each run's link to the shared resources, into the copy
        (run / "resources").unlink()
        (run / "resources").symlink_to(copy / "resources", target_is_directory=True)
    return copy, places


def test_one_name_for_other_weights_never_rescores_a_finished_run(two_runs):
    """Run h4 gave the name tb to other weights: run h2 again is byte for byte what it was and its record
    names folder A and A's digest; a third run naming folder C, whose files are older than every manifest,
    is scored with C and says so."""
    from plmfair.scoring.specs import folder_manifest

    base, places = two_runs["base"], two_runs["places"]
    h2, h4 = base / "runs" / "h2", base / "runs" / "h4"
    before = published(h2)
    assert before["results/crows_pairs/tiny_fr/tb.parquet"] != published(h4)["results/crows_pairs/tiny_fr/tb.parquet"]
    plmfair("run", "--run", "h2", *places, cwd=base)
    assert published(h2) == before
    digest = {name: folder_manifest(two_runs[name])["sha256"] for name in ("A", "B")}
    assert record_model(h2)["source"] == str(two_runs["A"]) and record_model(h2)["files_sha256"] == digest["A"]
    assert record_model(h4)["source"] == str(two_runs["B"]) and record_model(h4)["files_sha256"] == digest["B"]
    c = copy_model(two_runs["B"], base / "C")
    state = load_file(c / "model.safetensors")
    save_file({k: v * 0.5 for k, v in state.items()}, c / "model.safetensors", metadata={"format": "pt"})
    for path in c.iterdir():
        os.utime(path, (978307200, 978307200))  # 2001: older than any manifest
    h4_before = published(h4)
    plmfair("run", f"tb={c}", "--run", "h5", *places, cwd=base)
    h5 = base / "runs" / "h5"
    assert record_model(h5)["source"] == str(c) and record_model(h5)["files_sha256"] == folder_manifest(c)["sha256"]
    assert published(h2) == before and published(h4) == h4_before
    # the shared resources hold no manifest another run could read
    assert not list((base / "resources").rglob("manifests"))


def test_a_lost_or_corrupt_result_is_rebuilt_and_a_failure_says_what_it_lost(two_runs, tmp_path):
    base, places = run_copy(two_runs, tmp_path)
    h2, h4 = base / "runs" / "h2", base / "runs" / "h4"
    before, other = published(h2), published(h4)
    scores = "results/crows_pairs/tiny_fr/tb.parquet"
    # deleted: rebuilt by the next run, and only it with what reads it; no other run changes
    (h2 / scores).unlink()
    out = plmfair("run", "--run", "h2", *places, cwd=base)
    assert (h2 / scores).is_file() and published(h4) == other
    rebuilt = published(h2)
    assert pd.read_parquet(h2 / scores).equals(pd.read_parquet(io.BytesIO(before[scores])))
    assert json.loads(rebuilt["results/run.json"])["results"] == json.loads(before["results/run.json"])["results"]
    assert "status: complete, verified" in out.stdout
    # corrupt: the ingested pairs overwritten by something else are set aside (kept) and rebuilt; the
    # scores, which read them, are not redone (the rebuilt file is the same)
    ingested = h2 / "results/data/crows_pairs/tiny_fr.parquet"
    good, kept_scores = ingested.read_bytes(), (h2 / scores).read_bytes()
    ingested.write_bytes(b"not a parquet file")
    out = plmfair("run", "--run", "h2", *places, cwd=base)
    assert ingested.read_bytes() == good and (h2 / scores).read_bytes() == kept_scores
    (aside,) = (h2 / ".plmfair" / "altered").rglob("tiny_fr.parquet")
    assert aside.read_bytes() == b"not a parquet file"
    assert "1 result(s) changed since the workflow wrote them (results/data/crows_pairs/tiny_fr.parquet)" in out.stderr
    # a failed job: the run ends naming what it lost and the command that rebuilds it
    weights = two_runs["A"] / "model.safetensors"
    broken = tmp_path / "A"
    subprocess.run(["cp", "-a", str(two_runs["A"]), str(broken)], check=True)
    config = (h2 / "config.yaml").read_text().replace(str(two_runs["A"]), str(broken))
    (h2 / "config.yaml").write_text(config)
    (broken / "model.safetensors").write_bytes(weights.read_bytes()[:1000])
    failed = plmfair("run", "--run", "h2", *places, cwd=base, ok=False)
    again = f"plmfair run --run h2 --runs {base / 'runs'}"
    (line,) = [line for line in said(failed) if "missing after this failure" in line]
    assert line == failed.stderr.strip().splitlines()[-1]
    assert line.startswith("plmfair: job crows_pairs_score (dataset=tiny_fr, model=tb) failed: model 'tb'")
    assert line.endswith(
        f"; run h2: 1 result(s) of its last complete run are missing after this failure ({scores}): fix "
        f"what failed, then rebuild them: {again}"
    )
    (broken / "model.safetensors").write_bytes(weights.read_bytes())
    rerun = subprocess.run(
        [str(BIN / "plmfair"), *shlex.split(again)[1:], *places[4:6]], capture_output=True, text=True, cwd=base
    )  # the command it printed (with this machine's mirror)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert (h2 / scores).is_file() and published(h4) == other


def test_verify_names_every_file_changed_missing_or_not_of_the_configuration(two_runs, tmp_path):
    base, places = run_copy(two_runs, tmp_path)
    h2 = base / "runs" / "h2"
    runs_arg = ["--runs", str(base / "runs")]
    ok = plmfair("verify", "h2", *runs_arg, cwd=base)
    files = json.loads((h2 / "results/run.json").read_text())["files"]
    assert {
        "results/crows_pairs/tiny_fr/tb.parquet",
        "results/manifests/tb.json",
        "results/crows_pairs/summary.parquet",
        "results/tables/crows_pairs.csv",
        "results/figures/crows_pairs.pdf",
    } <= {f["path"] for f in files}
    assert (
        ok.stdout.splitlines()[-1] == f"run h2: verified: the {len(files)} files its record lists are as it lists them"
    )
    assert ok.stdout.startswith("models: 1 folder(s), ")
    (h2 / "results/tables/crows_pairs.md").write_text("| edited |\n")
    (h2 / "results/figures/crows_pairs.png").unlink()
    (h2 / "results/crows_pairs/tiny_fr/old_model.parquet").write_bytes(b"left from another configuration")
    bad = plmfair("verify", "h2", *runs_arg, "--no-models", cwd=base, ok=False)
    assert bad.stdout.splitlines() == [
        "changed: results/tables/crows_pairs.md",
        "missing: results/figures/crows_pairs.png",
        "not produced by the record's configuration: results/crows_pairs/tiny_fr/old_model.parquet",
    ]
    assert said(bad) == [] and bad.stderr.startswith("run h2: NOT verified: 1 changed, 1 missing, 1 not produced")
    assert "status: INCOMPLETE: 1 of the" in plmfair("show", "h2", *runs_arg, cwd=base).stdout
    # compare skips a run with a file missing, saying so, rather than dropping its rows without a word, and
    # compares the finished run beside it
    compared = plmfair("compare", str(h2), str(base / "runs" / "h4"), cwd=base)
    assert said(compared) == [
        f"plmfair: skipped: run h2 is incomplete: 1 of the files its record lists are missing "
        f"(results/figures/crows_pairs.png), so it is not compared; rebuild them: plmfair run --run h2 --runs "
        f"{base / 'runs'}"
    ]
    assert "| h4 " in compared.stdout and "| h2 " not in compared.stdout
    # the next run rebuilds the changed and missing ones and leaves the stranger where it is
    plmfair("run", "--run", "h2", *places, cwd=base)
    again = plmfair("verify", "h2", *runs_arg, "--no-models", cwd=base, ok=False)
    assert again.stdout.splitlines() == [
        "not produced by the record's configuration: results/crows_pairs/tiny_fr/old_model.parquet"
    ]
    (h2 / "results/crows_pairs/tiny_fr/old_model.parquet").unlink()
    assert "status: complete, verified" in plmfair("show", "h2", *runs_arg, cwd=base).stdout


def one_line(proc: subprocess.CompletedProcess) -> str:
    """The one line a refused command says (and nothing else of plmfair's; no traceback)."""
    assert proc.returncode != 0
    lines = said(proc)
    assert len(lines) == 1, proc.stderr[-3000:]
    return lines[0]


def test_bad_names_files_and_options_end_in_one_line(two_runs, bert, tmp_path):
    base, places = run_copy(two_runs, tmp_path)
    h2 = base / "runs" / "h2"
    before = published(h2)
    runs_arg = ["--runs", str(base / "runs")]

    def refused(*words):
        return one_line(plmfair(*words, cwd=base, ok=False))

    long = "r" * 300
    assert refused("run", f"x={bert}", "--run", long, "--dry-run", *places) == (
        f"plmfair: run name {long[:40]}... has 300 characters, more than 100: give a shorter one with --run NAME"
    )
    assert refused("run", f"{bert}", "--run", "", *places).startswith("plmfair: run name '': one folder name")
    assert refused("run", f"x={bert}:languages=[fr", *places).startswith(
        "plmfair: model option 'languages=[fr' (in 'x="
    )
    settings = h2 / "config.yaml"
    good = settings.read_bytes()
    settings.write_text("crows_pairs:\n  alpha: [0.05\n")
    assert refused("run", "--run", "h2", *places) == (
        f"plmfair: {settings}: not valid YAML at line 3, column 1 (expected ',' or ']', but got '<stream end>'); "
        f"fix it there"
    )
    settings.write_bytes(good.replace(b"crows_pairs:", b"crows_pairs: # \xff", 1))
    assert refused("run", "--run", "h2", *places).startswith(f"plmfair: {settings}: byte ")
    settings.write_text("")
    assert refused("run", "--run", "h2", *places).startswith(f"plmfair: {settings} is empty, but a run's config.yaml")
    settings.write_bytes(good)
    not_json = copy_model(bert, tmp_path / "not_json")
    (not_json / "config.json").write_text("{not json")
    line = refused("run", str(not_json), *places)
    assert "config.json is not valid JSON" in line and "--family" not in line
    # show, verify and compare refuse what is not a run, with a command that works
    demo_like = tmp_path / "demo_like"  # a workflow folder with a config of its own, never run
    demo_like.mkdir()
    (demo_like / "config.yaml").write_text((REPO / ".test" / "config" / "config.yaml").read_text())
    for words in (
        ["show", str(tmp_path)],
        ["show", str(demo_like)],
        ["verify", "nonexistent"],
    ):
        line = refused(*words, *runs_arg)
        assert "is not a run" in line and "plmfair run --run nonexistent" not in line, line
    # compare names what it skips, and with nothing left to compare ends in one line of its own
    nothing = plmfair("compare", "/nonexistent", cwd=base, ok=False)
    skipped, last = said(nothing)
    assert (
        skipped.startswith("plmfair: skipped: '/nonexistent' is not a run")
        and "plmfair run --run nonexistent" not in skipped
    )
    assert last == "plmfair: no finished run to compare among the 1 folder(s) given (each skipped above)"
    hint = refused("show", str(tmp_path), *runs_arg).split("; e.g. ")[1]
    plmfair(*shlex.split(hint)[1:], cwd=base)
    # a run whose last call failed: show says it is incomplete and how to finish it, exit 1
    (h2 / "results/run.json").unlink()
    assert refused("show", "h2", *runs_arg) == (
        f"plmfair: run h2 is incomplete: it has no record (results/run.json), so its last run did not finish; "
        f"finish it: plmfair run --run h2 --runs {base / 'runs'}"
    )
    assert {k: v for k, v in published(h2).items() if k != "results/run.json"} == {
        k: v for k, v in before.items() if k != "results/run.json"
    }


def test_a_read_only_results_folder_is_one_line_and_nothing_runs(two_runs, tmp_path, monkeypatch, capsys):
    """Snakemake asks os.access whether it may replace an output, which says yes to root whatever the mode:
    the same question is answered here as it is for another user."""
    from plmfair import cli

    base, places = run_copy(two_runs, tmp_path)
    h2 = base / "runs" / "h2"
    before = published(h2)
    subprocess.run(["chmod", "-R", "a-w", str(h2 / "results")], check=True)
    monkeypatch.setattr(cli.os, "access", lambda path, mode: bool(os.stat(path).st_mode & 0o200))
    try:
        assert cli.main(["run", "--run", "h2", *places]) == 1
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(h2 / "results")], check=True)
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"plmfair: {h2 / 'results'} cannot be written (mode 555): make the run's results writable "
        f"(chmod -R u+w {h2 / 'results'}) or run in another folder (--run NAME); nothing was run"
    )
    assert published(h2) == before


def _user_namespaces() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(["unshare", "--user", "true"]).returncode == 0


@pytest.mark.skipif(not _user_namespaces(), reason="needs unshare --user (a user namespace) to drop root's overrides")
def test_a_read_only_run_folder_is_one_line_and_nothing_changes(two_runs, tmp_path):
    """The whole run folder made read-only, and plmfair run as a user whom its modes stop: a process in a user
    namespace of its own keeps its user id but not root's power over files (`unshare --user`)."""
    base, places = run_copy(two_runs, tmp_path)
    h2 = base / "runs" / "h2"
    before = {p: p.read_bytes() for p in sorted(h2.rglob("*")) if p.is_file() and not p.is_symlink()}
    subprocess.run(["chmod", "-R", "a-w", str(h2)], check=True)
    try:
        proc = subprocess.run(
            ["unshare", "--user", str(BIN / "plmfair"), "run", "--run", "h2", *places],
            cwd=base,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(h2)], check=True)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"plmfair: {h2} cannot be written (mode 555): make the run's folder writable "
        f"(chmod -R u+w {h2}) or run in another folder (--run NAME); nothing was run"
    )
    assert {p: p.read_bytes() for p in sorted(h2.rglob("*")) if p.is_file() and not p.is_symlink()} == before


def test_ctrl_c_stops_a_run_with_nothing_lost_and_the_same_command_goes_on(two_runs, bert, tmp_path):
    """Ctrl-C in a scoring job, then in a table job of the same command run again: each time the job it met
    finished whole or left nothing, and the same command then finishes the run."""
    base, places = run_copy(two_runs, tmp_path)
    words = [str(BIN / "plmfair"), "run", f"other={bert}", "--run", "h9", *places]
    outputs = {
        "crows_pairs_score.py": base / "runs/h9/results/crows_pairs/tiny_fr/other.parquet",
        "table.py": base / "runs/h9/results/tables/crows_pairs.csv",
    }
    for script, output in outputs.items():
        first = subprocess.Popen(
            words,
            cwd=base,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            # Ctrl-C as a terminal delivers it: a test run started in the background (`pytest &`) passes
            # SIGINT down ignored, and a Python started with SIGINT ignored never raises KeyboardInterrupt
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        if scoring_job(first, script) is None:
            first.kill()
            pytest.fail(f"the job of {script} did not start:\n{first.communicate()[1][-3000:]}")
        os.killpg(first.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
        out, err = first.communicate(timeout=300)
        assert first.returncode == 130, err[-3000:]
        assert "Traceback" not in err and "Uncaught exception" not in err
        assert [line for line in err.splitlines() if line.startswith("plmfair:")][-1] == (
            "plmfair: interrupted: the finished jobs' results are kept and the stopped ones left no output, so "
            f"nothing is lost; rerun the same command: {shlex.join(['plmfair', *words[1:]])}"
        )
        # the job Ctrl-C met either finished (its file whole) or left nothing, not even a temporary file
        if output.suffix == ".parquet":
            assert not output.exists() or len(pd.read_parquet(output)) == 16
        else:
            assert not output.exists() or len(pd.read_csv(output)) > 0
        assert not [p for p in (base / "runs/h9").rglob("*") if ".plmfair-tmp." in p.name]
    assert outputs["crows_pairs_score.py"].exists()  # the second command went past the scoring job
    again = subprocess.run(words, cwd=base, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "status: complete, verified" in again.stdout


# ---- seals that cannot be forged or lost: each case as a hostile user tried it on d52a94a


def test_weights_swapped_in_place_with_old_times_are_rescored_and_recorded(two_runs, tmp_path):
    """B's weights (the same size, other values) copied over a run's model folder, its old time put back
    (cp then touch -r): the next run sees the folder changed, rebuilds its manifest and rescores it, and the
    record names the digest of what was scored; verify re-hashes the model folders and says how long it
    took. Then the same swap, and one scoring output deleted: the job rescores it and never under the old
    digest."""
    from plmfair.scoring.specs import folder_manifest

    base, places = run_copy(two_runs, tmp_path)
    mine = copy_model(two_runs["A"], tmp_path / "mine")
    plmfair("run", f"tb={mine}", "--run", "h6", *places, cwd=base)
    h6, h4 = base / "runs" / "h6", base / "runs" / "h4"
    scores = "results/crows_pairs/tiny_fr/tb.parquet"
    old = folder_manifest(mine)["sha256"]
    weights = mine / "model.safetensors"
    times = weights.stat()
    subprocess.run(["cp", str(two_runs["B"] / "model.safetensors"), str(weights)], check=True)
    os.utime(weights, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert weights.stat().st_size == times.st_size and weights.stat().st_mtime_ns == times.st_mtime_ns
    out = plmfair("run", "--run", "h6", *places, cwd=base)
    assert "model folder(s) changed since their manifest was written" in out.stderr
    new = folder_manifest(mine)["sha256"]
    assert new != old and record_model(h6)["files_sha256"] == new
    assert pd.read_parquet(h6 / scores)["sent_more_score"].equals(pd.read_parquet(h4 / scores)["sent_more_score"])
    assert "status: complete, verified" in out.stdout
    check = plmfair("verify", "h6", "--runs", str(base / "runs"), cwd=base)
    assert re.search(r"^models: 1 folder\(s\), [0-9.]+ GB re-hashed in [0-9.]+ s", check.stdout, re.M)
    # swapped back with old times and a scoring output lost: rescored with the folder as it is
    subprocess.run(["cp", str(two_runs["A"] / "model.safetensors"), str(weights)], check=True)
    os.utime(weights, ns=(times.st_atime_ns, times.st_mtime_ns))
    changed = plmfair("verify", "h6", "--runs", str(base / "runs"), cwd=base, ok=False)
    assert f"model changed: tb ({mine}): model.safetensors" in changed.stdout
    assert "--no-models" not in plmfair("verify", "h6", "--runs", str(base / "runs"), "--no-models", cwd=base).stdout
    (h6 / scores).unlink()
    plmfair("run", "--run", "h6", *places, cwd=base)
    assert record_model(h6)["files_sha256"] == old == folder_manifest(mine)["sha256"]
    assert json.loads((h6 / "results/manifests/tb.json").read_text())["sha256"] == old


def _seal(run: Path, relative: str) -> Path:
    return run / ".plmfair" / "seals" / f"{relative}.json"


def test_a_lost_or_broken_seal_never_lets_an_edit_in(two_runs, tmp_path):
    """Edited tables behind a missing, an empty and an invalid seal, then behind no seals at all, are set
    aside and rebuilt, never recorded; verify names a missing seal."""
    import shutil

    base, places = run_copy(two_runs, tmp_path)
    h2 = base / "runs" / "h2"
    breaks = {
        "results/tables/crows_pairs.md": lambda seal: seal.unlink(),
        "results/tables/crows_pairs.csv": lambda seal: seal.write_text(""),
        "results/tables/crows_pairs.tex": lambda seal: seal.write_text("{not json"),
    }
    good = {table: (h2 / table).read_bytes() for table in breaks}
    for table, breaking in breaks.items():
        breaking(_seal(h2, table))
    lost = plmfair("verify", "h2", "--runs", str(base / "runs"), cwd=base, ok=False)
    assert "seal missing or broken: results/tables/crows_pairs.md: no seal" in lost.stdout
    assert "results/tables/crows_pairs.tex: its seal cannot be read" in lost.stdout
    for table in breaks:
        (h2 / table).write_bytes(good[table] + b"54.92\n")
    out = plmfair("run", "--run", "h2", *places, cwd=base)
    assert all((h2 / table).read_bytes() == good[table] for table in breaks)
    assert "status: complete, verified" in out.stdout
    # every seal lost at once
    shutil.rmtree(h2 / ".plmfair" / "seals")
    table = "results/tables/crows_pairs.md"
    (h2 / table).write_bytes(good[table].replace(b"|", b"| 54.92 |", 1))
    out = plmfair("run", "--run", "h2", *places, cwd=base)
    rebuilt = (h2 / table).read_text()
    # this failed once in about six runs (2026-11-27; it passed in the three runs of the whole file since):
    # what differs, what was set aside and what the run said, for the next time
    assert rebuilt == good[table].decode(), "\n".join(
        [
            *difflib.unified_diff(good[table].decode().splitlines(), rebuilt.splitlines(), lineterm=""),
            str(sorted(p.relative_to(h2).as_posix() for p in (h2 / ".plmfair" / "altered").rglob("*.md"))),
            out.stderr[-3000:],
        ]
    )
    assert "status: complete, verified" in out.stdout
    assert plmfair("verify", "h2", "--runs", str(base / "runs"), cwd=base).returncode == 0


def test_a_same_size_edit_with_its_times_put_back_is_found_and_rebuilt(two_runs, tmp_path):
    """A table edited in place to the same size, its modification time set back to the seal's (os.utime, as
    touch -r does), with the record deleted too: the seal's change time gives it away, so the next run sets it
    aside and rebuilds it, and the record is written again."""
    base, places = run_copy(two_runs, tmp_path)
    h2 = base / "runs" / "h2"
    table = h2 / "results/tables/crows_pairs.md"
    good, stat = table.read_bytes(), table.stat()
    edited = good.replace(b"5", b"6", 1)
    assert edited != good and len(edited) == len(good)
    table.write_bytes(edited)
    os.utime(table, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    (h2 / "results/run.json").unlink()
    out = plmfair("run", "--run", "h2", *places, cwd=base)
    assert "moved to" in out.stderr + out.stdout and table.read_bytes() == good
    assert "status: complete, verified" in out.stdout
    assert plmfair("verify", "h2", "--runs", str(base / "runs"), "--no-models", cwd=base).returncode == 0


def test_a_table_forged_with_its_seal_and_record_entry_is_found_by_verify(two_runs, tmp_path):
    """A number of crows_pairs.md changed, its seal, its entry in the record and the record's seal rewritten to
    match: no hash can tell, but the table is not what the results it prints give, and verify says which."""
    from plmfair.io.atomic import sha256_of

    base, _ = run_copy(two_runs, tmp_path)
    h2, runs_arg = base / "runs" / "h2", ["--runs", str(base / "runs")]
    table, record_path = h2 / "results/tables/crows_pairs.md", h2 / "results/run.json"
    text = table.read_text()
    score = re.search(r"^\| Metric score .*?(\d+\.\d\d) \|", text, flags=re.M).group(1)  # the model's metric score
    forged = score[:-1] + str((int(score[-1]) + 1) % 10)  # its last decimal moved by one
    table.write_text(text.replace(f" {score} |", f" {forged} |", 1))  # the same width: a same-size edit

    def reseal(path: Path, relative: str) -> None:
        st = path.stat()
        seal = {"sha256": sha256_of(path), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}
        _seal(h2, relative).write_text(json.dumps(seal))

    reseal(table, "results/tables/crows_pairs.md")
    record = json.loads(record_path.read_text())
    entry = next(e for e in record["files"] if e["path"] == "results/tables/crows_pairs.md")
    entry.update(sha256=sha256_of(table), bytes=table.stat().st_size)
    record_path.write_text(json.dumps(record, indent=2))
    reseal(record_path, "results/run.json")
    bad = plmfair("verify", "h2", *runs_arg, "--no-models", cwd=base, ok=False)
    assert bad.stdout.splitlines() == [
        "table not as its results give it: results/tables/crows_pairs.md "
        "(not what results/crows_pairs/summary.parquet give)"
    ]
    assert "1 table(s) not as their results give them" in bad.stderr


def test_an_edited_record_is_named_and_its_numbers_are_not_shown(two_runs, tmp_path):
    """A score changed in run.json: verify and show say the record is not what its job wrote and show prints
    no number; with its seal forged to match, the numbers its files give again still differ."""
    from plmfair.io.atomic import sha256_of

    base, _ = run_copy(two_runs, tmp_path)
    h2, runs_arg = base / "runs" / "h2", ["--runs", str(base / "runs")]
    path = h2 / "results/run.json"
    record = json.loads(path.read_text())
    true_score = record["results"]["crows_pairs"][0]["score"]
    record["results"]["crows_pairs"][0]["score"] = true_score + 10
    path.write_text(json.dumps(record, indent=2))
    for forged in (False, True):
        if forged:
            seal = {"sha256": sha256_of(path), "bytes": path.stat().st_size, "mtime_ns": path.stat().st_mtime_ns}
            _seal(h2, "results/run.json").write_text(json.dumps(seal))
        bad = plmfair("verify", "h2", *runs_arg, "--no-models", cwd=base, ok=False)
        assert "record not as its files give it: results.crows_pairs[0].score" in bad.stdout
        assert ("record changed since its job wrote it" in bad.stdout) != forged
        shown = plmfair("show", "h2", *runs_arg, cwd=base).stdout
        assert "status: UNVERIFIED" in shown and "the record's numbers are not shown" in shown
        assert f"{true_score + 10:.2f}" not in shown
        # compare checks each run as show does: the edited one is skipped, named with its status, in every
        # format, and the verified one beside it is compared with its status
        for fmt in ("md", "json"):
            compared = plmfair("compare", str(h2), str(base / "runs" / "h4"), "--format", fmt, cwd=base)
            (skipped,) = said(compared)
            assert skipped.startswith("plmfair: skipped: run h2 is not compared: UNVERIFIED: ")
            assert "| h2 " not in compared.stdout and '"h2' not in compared.stdout  # none of its numbers
        (checked,) = json.loads(compared.stdout)["runs"]
        assert checked["run"] == "h4" and checked["status"].startswith("status: complete, verified")


def test_a_rerun_without_its_mirror_keeps_the_shared_downloads(two_runs, tmp_path):
    """The run's config.yaml keeps its mirror; a rerun without --mirror after the mirror is gone, and a
    download that fails (its pinned checksum changed), never remove the shared store's file: the failing
    job ends in plmfair's line, the other run still verifies."""
    base, places = run_copy(two_runs, tmp_path)
    h2 = base / "runs" / "h2"
    assert yaml.safe_load((h2 / "config.yaml").read_text())["mirror"] == str(DEMO_DATA)
    stored = base / "resources" / "downloads" / "crows_pairs_tiny_fr.csv"
    content = stored.read_bytes()
    # the command a user reruns: the run's name and folders, nothing else
    no_mirror = ["--runs", str(base / "runs"), "--resources", str(base / "resources"), "--cores", CORES]
    config = (h2 / "config.yaml").read_text()
    (h2 / "config.yaml").write_text(config.replace(str(DEMO_DATA), str(tmp_path / "gone")))
    (h2 / "results/downloads/crows_pairs_tiny_fr.csv").unlink()
    out = plmfair("run", "--run", "h2", *no_mirror, cwd=base)
    assert "status: complete, verified" in out.stdout and stored.read_bytes() == content
    pinned = yaml.safe_load((h2 / "config.yaml").read_text())
    pinned["datasets"]["crows_pairs"]["tiny_fr"]["sha256"] = "0" * 64
    (h2 / "config.yaml").write_text(yaml.safe_dump(pinned))
    failed = plmfair("run", "--run", "h2", *no_mirror, cwd=base, ok=False)
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("plmfair: job download (file=crows_pairs_tiny_fr.csv) failed: ")
    assert "RuleException" not in failed.stderr and "WorkflowError" not in failed.stderr
    assert stored.read_bytes() == content
    assert plmfair("verify", "h4", "--runs", str(base / "runs"), cwd=base).returncode == 0


def test_a_failure_ends_in_plmfairs_line_and_snakemakes_account_is_kept(two_runs, tmp_path):
    """A broken model's job, a resource Snakemake refuses (token_budget -1), --resources given a setting,
    verify and show while the run is held, a model folder that is gone: each ends in one line of plmfair's,
    the last thing printed; Snakemake's account is in the log the line names."""
    import fcntl

    base, places = run_copy(two_runs, tmp_path)
    h2, runs_arg = base / "runs" / "h2", ["--runs", str(base / "runs")]
    refused = plmfair(
        "run", "--run", "h2", *places, "--", "--set-resources", "crows_pairs_score:token_budget=-1", cwd=base, ok=False
    )
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("plmfair: Snakemake stopped: Resource 'token_budget' was given value '-1'"), last
    assert "WorkflowError" not in refused.stderr
    account = Path(last.split("Snakemake's account: ")[1])
    assert "WorkflowError" in account.read_text()
    assert one_line(plmfair("run", "--run", "h2", *places, "--resources", "token_budget=5", cwd=base, ok=False)) == (
        "plmfair: --resources token_budget=5: --resources is the folder of the downloads every run shares "
        "(default resources/), not a Snakemake resource; a scoring job's token budget is set with -- "
        "--set-resources crows_pairs_score:token_budget=N (or cloze_score:, tsne_vectors:)"
    )
    assert not (base / "token_budget=5").exists()
    # a model's job fails: its one line last, no Snakemake block on the terminal
    broken = copy_model(two_runs["A"], tmp_path / "broken")
    (broken / "model.safetensors").write_bytes((broken / "model.safetensors").read_bytes()[:1000])
    failed = plmfair("run", f"tb={broken}", "--run", "h8", *places, cwd=base, ok=False)
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("plmfair: job crows_pairs_score (dataset=tiny_fr, model=tb) failed: model 'tb'"), last
    assert "its log: results/logs/" in last
    for block in ("Error in rule", "RuleException", "CalledProcessError", "WorkflowError", "Traceback"):
        assert block not in failed.stderr
    assert "Error in rule crows_pairs_score" in Path(last.split("Snakemake's account: ")[1]).read_text()
    # held by a plmfair run: verify and show say so
    with open(h2 / ".plmfair.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        assert "run h2 is being run now" in plmfair("verify", "h2", *runs_arg, "--no-models", cwd=base).stdout
        assert "being run now: this is its last complete run" in plmfair("show", "h2", *runs_arg, cwd=base).stdout
        assert one_line(plmfair("show", "h8", *runs_arg, cwd=base, ok=False)) != ""
    # the folder a run scored is gone, another is given under the same name: the gone one is named
    moved = copy_model(two_runs["A"], tmp_path / "moved")
    config = (h2 / "config.yaml").read_text().replace(str(two_runs["A"]), str(tmp_path / "was_here"))
    (h2 / "config.yaml").write_text(config)
    line = one_line(plmfair("run", f"tb={moved}", "--run", "h2", *places, cwd=base, ok=False))
    assert line.startswith(f"plmfair: run 'h2' scored its model 'tb' from {tmp_path / 'was_here'}, which is gone")


def test_make_demo_ends_as_a_run_does():
    """make demo ends with plmfair show (headline, status, record, report); show prints for the demo's
    folder a report command that works there; the README's quick start shows the demo."""
    from plmfair import cli

    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}  # under make test
    recipe = (
        subprocess.run(
            ["make", "--no-print-directory", "-n", "demo", "VENV=.venv"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        .stdout.strip()
        .splitlines()
    )
    assert recipe[-1] == ".venv/bin/plmfair show .test"
    assert cli._report_command(REPO / ".test") == "make demo-report" and cli._run_again(REPO / ".test") == "make demo"
    assert cli._report_command(REPO) == "make report" and cli._run_again(REPO) == "plmfair run"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start")[1].split("\n## ")[0]
    assert "make demo " in quick_start and "make test " in quick_start and "make run " in readme


# Each row of the troubleshooting table of the usage page (docs/usage.md; a fragment of its first column) and the
# tests that meet its message as a user would.
TROUBLESHOOTING = {
    "config error at <key>": ["test_config.py::test_config_errors_are_one_line_naming_the_key"],
    "--set-threads": ["test_hostile.py::test_a_bad_resource_override_stops_the_run_in_one_line"],
    "has no weights": [
        "test_config.py::test_config_errors_are_one_line_naming_the_key",
        "scoring/test_loader.py::test_model_folder_without_config",
        "scoring/test_loader.py::test_model_folder_without_weights",
    ],
    "is not in the Hub cache and the Hub cannot be reached": [
        "io/test_hub.py::test_unknown_revision_and_uncached_model_say_what_to_do"
    ],
    "the Hub cannot be reached and <id>": [
        "test_cli.py::test_a_hub_id_with_no_hub_to_reach_is_refused_from_the_cache_in_one_line"
    ],
    "the tokenizer has 5 entries": ["scoring/test_loader.py::test_a_folder_without_its_tokenizer_files_is_refused"],
    "the tokenizer produces ids up to": [
        "scoring/test_loader.py::test_a_tokenizer_larger_than_the_embeddings_is_refused"
    ],
    "the checkpoint lacks N tensor(s)": [
        "test_hostile.py::test_a_broken_model_stops_its_job_with_one_line",
        "scoring/test_loader.py::test_checkpoint_of_another_family_stops_before_scoring",
    ],
    "names its own code": [
        "scoring/test_loader.py::test_a_checkpoint_naming_its_own_code_is_told_that_code_is_not_run"
    ],
    "reads 100.0% of the pieces": [
        "scoring/test_coverage.py::test_an_english_model_on_chinese_pairs_is_counted_skipped_and_warned"
    ],
    "column 'status' holds": [
        "io/test_parquet.py::test_a_pair_file_of_another_version_is_refused_with_the_command_that_rebuilds_it",
        "test_hostile.py::test_a_lost_or_corrupt_result_is_rebuilt_and_a_failure_says_what_it_lost",
    ],
    "no space left": ["io/test_atomic.py::test_disk_full_is_one_line_with_the_space_it_needed_and_leaves_nothing"],
    "is on a read-only file system": ["io/test_atomic.py::test_read_only_and_permission_denied_are_one_line"],
    "checksum mismatch": ["io/test_download.py::test_checksum_mismatch_leaves_nothing"],
    "already has a model": [
        "test_cli.py::test_a_run_never_takes_another_folder_or_setting_under_its_model_name",
        "test_cli.py::test_one_plmfair_at_a_time_on_a_run",
    ],
    "is locked by a Snakemake": [
        "test_hostile.py::test_kill_mid_run_then_rerun_and_a_second_run_in_the_same_directory",
        "test_hostile.py::test_ctrl_c_stops_a_run_with_nothing_lost_and_the_same_command_goes_on",
    ],
    "not valid YAML": ["test_hostile.py::test_bad_names_files_and_options_end_in_one_line"],
    "has 300 characters": ["test_hostile.py::test_bad_names_files_and_options_end_in_one_line"],
    "cannot be written (mode 555)": ["test_hostile.py::test_a_read_only_results_folder_is_one_line_and_nothing_runs"],
    "changed since the workflow wrote them": [
        "test_hostile.py::test_a_lost_or_corrupt_result_is_rebuilt_and_a_failure_says_what_it_lost"
    ],
    "missing after this failure": [
        "test_hostile.py::test_a_lost_or_corrupt_result_is_rebuilt_and_a_failure_says_what_it_lost"
    ],
    "changed since its manifest": [
        "scoring/test_loader.py::test_a_folder_changed_since_its_manifest_is_never_scored",
        "test_hostile.py::test_weights_swapped_in_place_with_old_times_are_rescored_and_recorded",
    ],
    "failed: <what its log says>": [
        "test_hostile.py::test_a_failure_ends_in_plmfairs_line_and_snakemakes_account_is_kept",
        "test_hostile.py::test_a_rerun_without_its_mirror_keeps_the_shared_downloads",
        "runs/test_console.py::test_the_failed_job_its_wildcards_and_log_are_read_from_the_account",
    ],
    "--resources token_budget=5": [
        "test_hostile.py::test_a_failure_ends_in_plmfairs_line_and_snakemakes_account_is_kept"
    ],
    "is being run now": ["test_hostile.py::test_a_failure_ends_in_plmfairs_line_and_snakemakes_account_is_kept"],
    "which is gone": ["test_hostile.py::test_a_failure_ends_in_plmfairs_line_and_snakemakes_account_is_kept"],
    "seal missing or broken": [
        "test_hostile.py::test_a_lost_or_broken_seal_never_lets_an_edit_in",
        "test_hostile.py::test_an_edited_record_is_named_and_its_numbers_are_not_shown",
        "test_hostile.py::test_weights_swapped_in_place_with_old_times_are_rescored_and_recorded",
    ],
    "interrupted:": ["test_hostile.py::test_ctrl_c_stops_a_run_with_nothing_lost_and_the_same_command_goes_on"],
    "is not a run": ["test_hostile.py::test_bad_names_files_and_options_end_in_one_line"],
    "not produced by the record's configuration": [
        "test_hostile.py::test_verify_names_every_file_changed_missing_or_not_of_the_configuration"
    ],
}


def test_every_row_of_the_troubleshooting_table_is_met_by_a_test():
    table = (REPO / "docs" / "usage.md").read_text(encoding="utf-8").split("## Troubleshooting")[1].split("\n## ")[0]
    rows = [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| `")]
    for row in rows:
        fragments = [f for f in TROUBLESHOOTING if f in row]
        assert len(fragments) == 1, f"troubleshooting row without (or with two) tests: {row}"
    assert len(rows) == len(TROUBLESHOOTING)
    for tests in TROUBLESHOOTING.values():
        for test in tests:
            module, name = test.split("::")
            assert f"def {name}(" in (REPO / "tests" / module).read_text(encoding="utf-8"), test
