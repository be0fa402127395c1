"""One model load for a model's scoring jobs (plmfair.scoring.shared_load): the first job scores
its own data set and the ready ones of the others into the cache; each other job takes its files
from there without loading; anything that decides the scores changes the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plmfair.scoring.shared_load import Task, score_with_one_load


class FakeModel:
    """Counts loads and the data sets it scored; writes each output as the input's text, tagged."""

    def __init__(self, fail_on: str | None = None):
        self.loads, self.scored, self.fail_on = 0, [], fail_on

    def load(self):
        self.loads += 1
        return self

    def score(self, loaded, task: Task, paths: dict[str, Path], scored_by: str) -> None:
        if task.label == self.fail_on:
            raise ValueError(f"bad row in {task.label}")
        self.scored.append(task.label)
        text = Path(task.inputs[0]).read_text()
        for name, path in paths.items():
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps({"input": text, "output": name, "scored_by": scored_by}))


@pytest.fixture
def run(tmp_path, monkeypatch):
    """A run folder with three data sets' inputs and a model manifest; ``job(label)`` runs that
    data set's job the way the scoring scripts do."""
    monkeypatch.chdir(tmp_path)
    for name in ("a", "b", "c"):
        Path(f"data/{name}.txt").parent.mkdir(exist_ok=True)
        Path(f"data/{name}.txt").write_text(f"pairs of {name}")
    Path("manifest.json").write_text('{"revision": "1"}')

    def task(label: str, **settings) -> Task:
        return Task(
            label,
            inputs=(f"data/{label}.txt",),
            outputs={"scores": f"results/{label}.parquet", "meta": f"results/{label}.json"},
            settings={"protocol": "nangia", **settings},
        )

    def job(label: str, fake: FakeModel, labels=("a", "b", "c"), **settings) -> None:
        score_with_one_load(
            task(label, **settings),
            [task(x, **settings) for x in labels],
            model="m",
            study="crows_pairs",
            model_files=["manifest.json"],
            load=fake.load,
            score=fake.score,
        )

    return job


def test_the_first_job_scores_every_ready_data_set_with_one_load_and_the_others_take_their_files(run):
    fake = FakeModel()
    run("b", fake)
    assert fake.loads == 1 and fake.scored == ["b", "a", "c"]
    assert json.loads(Path("results/b.parquet").read_text())["scored_by"] == "b"
    assert not Path("results/a.parquet").exists()  # another job's output is written by that job
    for label in ("a", "c"):
        run(label, fake)
        record = json.loads(Path(f"results/{label}.parquet").read_text())
        assert record == {"input": f"pairs of {label}", "output": "scores", "scored_by": "b"}
        assert Path(f"results/{label}.json").exists()
    assert fake.loads == 1  # the later jobs loaded nothing
    assert not [p for p in Path(".plmfair/scoring-cache/m/crows_pairs").iterdir() if p.name != ".lock"]  # entries taken


def test_a_data_set_added_later_is_scored_alone(run):
    fake = FakeModel()
    for label in ("a", "b"):
        run(label, fake, labels=("a", "b"))
    assert fake.loads == 1 and fake.scored == ["a", "b"]
    before = {p: Path(p).stat().st_mtime_ns for p in ("results/a.parquet", "results/b.parquet")}
    run("c", fake)  # the configuration now names c as well: only c's job runs
    assert fake.loads == 2 and fake.scored == ["a", "b", "c"]
    assert {p: Path(p).stat().st_mtime_ns for p in before} == before


def test_a_data_set_whose_input_is_not_written_yet_is_left_to_its_own_job(run):
    Path("data/c.txt").unlink()
    fake = FakeModel()
    run("a", fake)
    assert fake.scored == ["a", "b"]
    Path("data/c.txt").write_text("pairs of c")
    run("c", fake)
    assert fake.loads == 2 and fake.scored[-1] == "c"


@pytest.mark.parametrize("change", ["input", "settings", "manifest"])
def test_a_cached_result_is_not_taken_when_anything_that_decides_it_changed(run, change):
    fake = FakeModel()
    run("a", fake)
    if change == "input":
        Path("data/b.txt").write_text("pairs of b, revised")
        run("b", fake)
    elif change == "settings":
        run("b", fake, protocol="aul")
    else:
        Path("manifest.json").write_text('{"revision": "2"}')
        run("b", fake)
    assert fake.loads == 2  # scored again by its own job
    record = json.loads(Path("results/b.parquet").read_text())
    assert record["scored_by"] == "b"
    assert record["input"] == ("pairs of b, revised" if change == "input" else "pairs of b")


def test_a_failure_on_another_data_set_is_left_to_that_data_set_s_own_job(run, caplog):
    fake = FakeModel(fail_on="b")
    run("a", fake)
    assert fake.scored == ["a", "c"] and "not scored ahead (bad row in b)" in caplog.text
    assert not list(Path(".plmfair/scoring-cache/m/crows_pairs").glob("*.partial"))
    with pytest.raises(ValueError, match="bad row in b"):  # its own job reports the error
        run("b", fake)
    assert not Path("results/b.parquet").exists()


def test_a_job_whose_output_exists_is_not_scored_ahead(run):
    Path("results").mkdir()
    Path("results/c.parquet").write_text("kept")
    fake = FakeModel()
    run("a", fake)
    assert fake.scored == ["a", "b"] and Path("results/c.parquet").read_text() == "kept"


def test_an_entry_made_with_other_settings_is_removed_when_its_data_set_s_job_runs(run):
    fake = FakeModel()
    run("a", fake, protocol="aul")  # b and c cached under the aul settings
    run("b", fake)  # the configuration changed back to nangia: b is scored again
    assert [p.name.split(".")[0] for p in Path(".plmfair/scoring-cache/m/crows_pairs").glob("b.*")] == []
    assert len(list(Path(".plmfair/scoring-cache/m/crows_pairs").glob("c.*"))) == 2  # c's own job has not run yet


def test_a_data_set_that_needs_another_load_is_left_to_its_own_job(tmp_path, monkeypatch):
    """A load serves only the tasks that need the model loaded so (its precision): a set configured
    for bf16 is not scored ahead by a job that loaded the model in fp32."""
    monkeypatch.chdir(tmp_path)
    for name in ("a", "b"):
        Path(f"{name}.txt").write_text(name)
    Path("manifest.json").write_text("{}")
    tasks = [
        Task(name, inputs=(f"{name}.txt",), outputs={"scores": f"out/{name}"}, loading={"precision": precision})
        for name, precision in (("a", "fp32"), ("b", "bf16"))
    ]
    fake = FakeModel()
    score_with_one_load(
        tasks[0], tasks, model="m", study="cloze", model_files=["manifest.json"], load=fake.load, score=fake.score
    )
    assert fake.scored == ["a"]


def test_a_stale_entry_is_one_data_set_s_own_and_never_a_dotted_neighbour_s(run, tmp_path):
    """Data set ``a``'s job removes ``a``'s entries made with other settings, not those of a data set
    whose name starts with ``a.``."""
    folder = Path(".plmfair/scoring-cache/m/crows_pairs")
    folder.mkdir(parents=True)
    (folder / f"a.v2.{'0' * 32}").mkdir()
    (folder / f"a.{'1' * 32}").mkdir()
    run("a", FakeModel(), labels=("a",))
    assert sorted(p.name for p in folder.iterdir()) == [f"a.v2.{'0' * 32}"]
