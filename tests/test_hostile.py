"""Faults a run meets, driven through Snakemake: a broken model, a job killed mid-run, a second
run in the same folder, a study switched off, weights replaced under a finished run.

Every case must end in one line that names the file, row or key and says what to do (or a
counted skip, or a correct result), and leave no output that looks valid. The malformed-input
cases of each reader are tables in that module's tests (test_data, test_config, test_loader, ...).
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest
import yaml
from conftest import BIN, DEMO_DATA, REPO, dry_run_jobs, snakemake
from safetensors.torch import load_file, save_file

from plmfair_demo import build_tiny_model

pytestmark = pytest.mark.e2e

TEXTS = ["The members of the committee met on Monday.", "Les membres de la commission se sont réunis."] * 5


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return build_tiny_model("bert", TEXTS, tmp_path_factory.mktemp("tiny") / "bert", vocab_size=300)


def copy_model(model: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-a", str(model), str(dest)], check=True)
    return dest


def small_config(tmp_path: Path, **models: Path) -> Path:
    """CrowS-Pairs only, on the French demo pairs, with local masked LMs."""
    with open(REPO / ".test" / "config" / "config.yaml") as fh:
        cfg = yaml.safe_load(fh)
    cfg["models"] = {name: {"path": str(path), "family": "mlm"} for name, path in models.items()}
    cfg["mozart"] = {"enabled": False}
    cfg["cloze"] = {"enabled": False}
    cfg["crows_pairs"] = {"datasets": ["demo_fr"]}
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


SUMMARY = "results/crows_pairs/summary.parquet"


def command(work: Path, configfile: Path, *targets: str) -> list[str]:
    """The demo's command line on ``work`` for ``targets`` (the --config item comes last)."""
    return [str(BIN / "snakemake"), *targets, "--snakefile", str(REPO / "Snakefile"), "--directory", str(work),
            "--workflow-profile", str(REPO / ".test" / "profile"), "--cores", "2", "--configfile", str(configfile),
            "--config", f"mirror={DEMO_DATA}"]


def test_a_broken_model_stops_its_job_with_one_line(bert, tmp_path):
    model = copy_model(bert, tmp_path / "encoder_only")
    state = load_file(model / "model.safetensors")
    save_file({k: v for k, v in state.items() if not k.startswith("cls.")}, model / "model.safetensors",
              metadata={"format": "pt"})
    work = tmp_path / "work"
    proc = snakemake(work, "results/crows_pairs/demo_fr/local.parquet", configfiles=(small_config(tmp_path, local=model),),
                     check=False)
    assert proc.returncode != 0
    log = (work / "results/logs/crows_pairs/demo_fr/local.log").read_text()
    assert "model 'local'" in log and "the checkpoint lacks 6 tensor(s)" in log and "Traceback" not in log
    assert not (work / "results/crows_pairs/demo_fr/local.parquet").exists()


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
    target = "results/crows_pairs/demo_fr/local.parquet"
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
    assert len(scores) == 40 and (scores["status"] == "ok").sum() >= 30


def test_a_study_switched_off_by_a_configfile_really_goes(tmp_path):
    off = tmp_path / "off.yaml"
    off.write_text("cloze:\n  enabled: false\nmozart:\n  enabled: false\n")
    proc = snakemake(tmp_path / "w", "--dry-run", configfiles=(REPO / "config" / "config.yaml", off), mirror=None)
    assert "wmt13-dev.tgz" not in proc.stdout and "MozArt.zip" not in proc.stdout
    assert "cloze_" not in proc.stdout
    assert "crows_pairs_score" in proc.stdout


def planned(cmd: list[str]) -> list[str]:
    """'rule wildcards' of every job a dry run plans."""
    proc = subprocess.run([*cmd[:-2], "--dry-run", *cmd[-2:]], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [f"{rule} {wildcards}".strip() for rule, wildcards in dry_run_jobs(proc.stdout)]


def test_replacing_a_local_models_weights_reruns_exactly_its_jobs(bert, tmp_path):
    first, second = copy_model(bert, tmp_path / "first"), copy_model(bert, tmp_path / "second")
    cmd = command(tmp_path / "work", small_config(tmp_path, local=first, other=second), SUMMARY)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert planned(cmd) == []
    state = load_file(second / "model.safetensors")
    save_file({k: v + 0.01 for k, v in state.items()}, second / "model.safetensors", metadata={"format": "pt"})
    jobs = planned(cmd)
    assert "model_manifest model=other" in jobs and "crows_pairs_score dataset=demo_fr, model=other" in jobs
    assert not [job for job in jobs if "model=local" in job], jobs
    # what follows the scores reruns; no other model's job does
    assert {job.split()[0] for job in jobs} == {"model_manifest", "crows_pairs_score", "crows_pairs_summary"}



def test_a_bad_resource_override_stops_the_run_in_one_line(tmp_path):
    """`--set-threads crows_pairs_score=two` was a 55-line ResourceConstraintError from the scheduler."""
    proc = subprocess.run([*command(tmp_path / "work", REPO / ".test" / "config" / "config.yaml"), "-n",
                           "--set-threads", "crows_pairs_score=two"], capture_output=True, text=True)
    said = [line for line in proc.stderr.splitlines() if line.startswith("plmfair:")]
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert said == ["plmfair: --set-threads crows_pairs_score=two: threads takes a whole number (or an expression of "
                    "input, threads, attempt), e.g. --set-threads crows_pairs_score=4"]
