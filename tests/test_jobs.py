"""Library jobs: a rule names a function, which gets the rule's inputs, outputs and params by name."""

import pandas as pd
import pytest

from plmfair.jobs import JobError, job_function, run


def test_a_job_gets_its_names_and_the_threads_it_takes(tmp_path, monkeypatch):
    calls = {}

    def job(*, pairs, scores, alpha, threads, token_budget):
        calls.update(pairs=pairs, scores=scores, alpha=alpha, threads=threads, token_budget=token_budget)

    monkeypatch.setattr("plmfair.jobs.job_function", lambda name: job)
    run(
        "x:job",
        "r",
        inputs={"pairs": "p.parquet"},
        outputs={"scores": "s.parquet"},
        params={"alpha": 0.05},
        threads=4,
        resources={"token_budget": 512, "mem_mb": 100, "tmpdir": "/tmp"},
    )
    # mem_mb and tmpdir are not among the function's parameters: not passed
    assert calls == {"pairs": "p.parquet", "scores": "s.parquet", "alpha": 0.05, "threads": 4, "token_budget": 512}


def test_a_name_used_twice_in_a_rule_is_refused_with_the_rule():
    with pytest.raises(JobError, match=r"rule tsne_vectors: 'model' is both input and params"):
        run(
            "plmfair.cloze.annotations:ingest_cloze_test",
            "tsne_vectors",
            inputs={"model": "m.json"},
            outputs={},
            params={"model": {"hf_id": "x"}},
            threads=1,
            resources={},
        )


@pytest.mark.parametrize(
    "name",
    [
        "plmfair.cloze.annotations",
        "plmfair.cloze.annotations:nothing",
        "plmfair.nowhere:f",
        "plmfair.cloze.annotations:MOZART_SCHEMA",
    ],
)
def test_a_job_that_names_no_function_is_refused(name):
    with pytest.raises(JobError, match=f"job '{name}' names no function"):
        job_function(name)


def test_ingest_cloze_test_is_a_library_job(tmp_path, demo_data):
    """The rule ingest_cloze_test runs plmfair.cloze.annotations:ingest_cloze_test through the generic script."""
    from plmfair.cloze.annotations import read_mozart_zip

    out = tmp_path / "annotations.parquet"
    run(
        "plmfair.cloze.annotations:ingest_cloze_test",
        "ingest_cloze_test",
        inputs={"archive": demo_data / "MozArt.zip"},
        outputs={"annotations": str(out)},
        params={"languages": ["en", "fr"]},
        threads=1,
        resources={},
    )
    got = pd.read_parquet(out)
    pd.testing.assert_frame_equal(got, read_mozart_zip(demo_data / "MozArt.zip", ["en", "fr"]), check_dtype=False)
