"""A run folder's files against the names this plmfair makes (torch-free, no Snakemake)."""

from __future__ import annotations

from plmfair.runs import integrity


def test_results_under_an_earlier_versions_names_are_found_and_set_aside_whole(tmp_path):
    """The analysis plan of records before version 6 (results/analysis_plan.parquet and its table in every
    format) is what ``plmfair run`` sets aside before it makes the run's hypotheses, so that an upgraded run
    verifies; the files of this version, and a table whose name only starts alike, stay."""
    kept = ["results/hypotheses.parquet", "results/tables/hypotheses.md", "results/tables/analysis_plans.md"]
    old = ["results/analysis_plan.parquet", *(f"results/tables/analysis_plan.{ext}" for ext in ("csv", "md", "tex"))]
    for relative in [*kept, *old]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(relative)
    assert integrity.retired(tmp_path) == sorted(old)
    where = integrity.set_aside(tmp_path, integrity.retired(tmp_path))
    assert integrity.retired(tmp_path) == [] and all((tmp_path / f).is_file() for f in kept)
    assert sorted(p.relative_to(where).as_posix() for p in where.rglob("*") if p.is_file()) == sorted(old)
    assert (where / "results/analysis_plan.parquet").read_text() == "results/analysis_plan.parquet"
