"""Every figure kind drawn at the shapes people make (one model on one data set, one on ten, a dozen on one, a
dozen on ten; one and four languages; 6 and 200 specifications), to real PNG files: a layout warning fails the
drawing (save_figure raises it), and no blank band may take more than a fifth of the picture's height."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from decisions import decided_for
from matplotlib.image import imread

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.figures import breakdown_figure as cloze_breakdown_figure
from plmfair.cloze.figures import mozart_mrr_figure, tsne_figure
from plmfair.crows_pairs.figures import breakdown_figure, crows_pairs_figure, specification_curve
from plmfair.crows_pairs.schemas import AXES
from plmfair.rendering.plots import effects_forest_figure

BIAS_TYPES = ("race-color", "gender", "socioeconomic", "nationality", "religion", "age", "sexual-orientation",
              "physical-appearance", "disability")  # fmt: skip
LANGUAGES = ("en", "es", "de", "fr")
BLANK_SHARE = 0.2  # the most of a picture's height one blank band may take


def blank_band(png) -> float:
    """The longest run of blank (all but white) pixel rows of a PNG, as a share of its height."""
    image = imread(png)[..., :3]
    blank = (image > 0.97).all(axis=(1, 2))
    longest = run = 0
    for row in blank:
        run = run + 1 if row else 0
        longest = max(longest, run)
    return longest / len(blank)


def models(n: int) -> list[str]:
    return [f"model_{i:02d}_of_a_longer_name" for i in range(n)]


def datasets(n: int) -> list[str]:
    return ["fr", *(f"set_{i}" for i in range(1, n))]


def crows_pairs_summary(n_models: int, n_datasets: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(n_models * 100 + n_datasets)
    rows = [
        {"dataset": d, "model": m, "subset_kind": kind, "subset": subset}
        for d, m in itertools.product(datasets(n_datasets), models(n_models))
        for kind, subset in [("overall", "metric"), *(("bias_type", b) for b in BIAS_TYPES)]
    ]
    summary = pd.DataFrame(rows)
    share = rng.uniform(35, 70, len(summary))
    summary = summary.assign(
        score=share - 5,
        decisive_score=share,
        ci_low=share - 6,
        ci_high=share + 6,
        neutral_share=rng.uniform(0, 30, len(summary)),
        n_neutral=rng.integers(0, 50, len(summary)),
    )
    families = ["confirmatory" if k == "overall" else "secondary" for k in summary["subset_kind"]]
    decided, summary["hypothesis"] = decided_for(summary, families, rng.random(len(summary)) < 0.3)
    return summary, decided


def crows_pairs_breakdowns(n_models: int, n_datasets: int) -> pd.DataFrame:
    rows = [
        {"dataset": d, "model": m, "attribute": a, "bucket": b, "bucket_order": i}
        for d, m in itertools.product(datasets(n_datasets), models(n_models))
        for a, buckets in (("length", ("1-9", "10-14", "15-19", "20+")), ("bias_type", BIAS_TYPES))
        for i, b in enumerate(buckets)
    ]
    frame = pd.DataFrame(rows)
    return frame.assign(n=40, n_decisive=30, score=np.linspace(20, 80, len(frame)))


def specifications(n_specifications: int, n_runs: int = 1) -> pd.DataFrame:
    values = {
        "protocol": ["nangia", "all_tokens", "within_word_l2r", "aul", "sentence_log_likelihood"],
        "precision": ["bf16", "fp32"],
        "tie": ["tolerance", "0", "0.001", "0.01"],
        "pairs": ["all", "without exclusions.csv"],
        "data": ["all", "native", "translated"],
    }
    grid = list(itertools.product(*(values[axis] for axis in AXES)))[:n_specifications]
    rows = []
    for (d, m), spec in itertools.product(list(itertools.product(datasets(n_runs), models(1))), range(len(grid))):
        estimate = 45 + 10 * np.sin(spec)
        rows.append(
            {
                "dataset": d,
                "model": m,
                **dict(zip(AXES, grid[spec], strict=True)),
                "specification": "; ".join(f"{a}={v}" for a, v in zip(AXES, grid[spec], strict=True)),
                "estimate": estimate,
                "ci_low": estimate - 4,
                "ci_high": estimate + 4,
                "verdict": "stereotypical" if estimate - 4 > 50 else "anti-stereotypical" if estimate + 4 < 50 else
                "no preference",
                "holds": spec % 3 != 0,
                "level": 0.05 / 12,
                "default": spec == 0,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def group_gaps(n_models: int, n_languages: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [
        {"model": m, "lang": lang, "metric": metric, "group": g, "reference": "MN"}
        for m, lang, metric, g in itertools.product(
            models(n_models), [*LANGUAGES[:n_languages], "all"], ("rr", "hit1"), GROUPS[1:]
        )
    ]
    gaps = pd.DataFrame(rows)
    gap = np.linspace(-0.2, 0.2, len(gaps))
    gaps = gaps.assign(gap=gap, ci_low=gap - 0.1, ci_high=gap + 0.1, ci_level=0.95, informative=True)
    decided, gaps["hypothesis"] = decided_for(gaps, ["secondary"] * len(gaps), np.arange(len(gaps)) % 4 == 0)
    return gaps, decided


def language_effects(n_models: int, n_datasets: int) -> pd.DataFrame:
    names = datasets(n_datasets)
    rows = [
        {"model": m, "term": f"dataset[T.{d}]", "reference": names[0], "estimate": 0.1 * i, "converged": True}
        for m in models(n_models)
        for i, d in enumerate(names[1:], start=1)
    ]
    return pd.DataFrame(rows, columns=["model", "term", "reference", "estimate", "converged"])


def mrr(n_models: int, n_languages: int) -> pd.DataFrame:
    rows = [
        {"model": m, "lang": lang, "group": g, "mrr": 10.0 + 3 * i}
        for m, lang in itertools.product(models(n_models), LANGUAGES[:n_languages])
        for i, g in enumerate(GROUPS)
    ]
    return pd.DataFrame(rows)


def cloze_breakdowns(n_models: int) -> pd.DataFrame:
    rows = [
        {"model": m, "lang": "all", "group": g, "attribute": a, "bucket": b, "bucket_order": i}
        for m, g in itertools.product(models(n_models), (*GROUPS, "all"))
        for a, buckets in (("pos", ("NOUN", "VERB", "ADJ", "ADV")), ("length", ("1-9", "10-19", "20+")))
        for i, b in enumerate(buckets)
    ]
    frame = pd.DataFrame(rows)
    return frame.assign(n=12, annotations=48, mrr=np.linspace(5, 60, len(frame)))


def tsne_coordinates(n_models: int, n_languages: int) -> pd.DataFrame:
    rng = np.random.default_rng(n_models + n_languages)
    rows = [
        {"model": m, "s_id": s, "lang": lang, "candidate": f"w{k}", "rank": k + 1, "n_answers": k % 3,
         "text": f"Sentence {s} with a <mask> here", "x": rng.normal(), "y": rng.normal()}
        for m, s, lang, k in itertools.product(models(n_models), ("q1", "q2"), LANGUAGES[:n_languages], range(10))
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _draws():
    """(figure kind, shape, drawing function of a PNG and a PDF path)."""
    for n_models, n_datasets in ((1, 1), (1, 10), (12, 1), (12, 10)):
        shape = f"{n_models}x{n_datasets}"
        summary, decided = crows_pairs_summary(n_models, n_datasets)
        yield "crows_pairs", shape, lambda png, pdf, s=summary, p=decided: crows_pairs_figure(s, p, png, pdf)
        table = crows_pairs_breakdowns(n_models, n_datasets)
        yield "crows_pairs_breakdowns", shape, lambda png, pdf, t=table: breakdown_figure(t, png, pdf)
        if n_datasets > 1:
            effects = language_effects(n_models, n_datasets)
            yield (
                "crows_pairs_language_effects",
                shape,
                lambda png, pdf, e=effects: effects_forest_figure(
                    e, png, pdf, title="CrowS-Pairs: score margin of each data set against the first", alpha=0.05
                ),
            )
    for n_specifications, n_runs in ((6, 1), (200, 1), (6, 4)):
        specs = specifications(n_specifications, n_runs)
        yield (
            "crows_pairs_specification_curve",
            f"{n_specifications}x{n_runs}",
            lambda png, pdf, s=specs: specification_curve(s, png, pdf),
        )
    for n_models, n_languages in ((1, 1), (1, 4), (12, 1), (12, 4)):
        shape = f"{n_models}x{n_languages}"
        metrics = mrr(n_models, n_languages)
        yield "cloze_mrr", shape, lambda png, pdf, m=metrics: mozart_mrr_figure(m, png, pdf)
        gaps, decided = group_gaps(n_models, n_languages)
        yield (
            "cloze_group_effects",
            shape,
            lambda png, pdf, g=gaps, p=decided: effects_forest_figure(
                g, png, pdf, title="set: each annotator group's gap to the reference group", hypotheses=p, alpha=0.05
            ),
        )
        breakdowns = cloze_breakdowns(n_models)
        yield (
            "cloze_breakdowns",
            shape,
            lambda png, pdf, b=breakdowns: cloze_breakdown_figure(
                b, png, pdf, title="set: MRR over the top 5 (%) by attribute bucket, all languages"
            ),
        )
        coordinates = tsne_coordinates(min(n_models, 3), n_languages)  # the t-SNE job maps a few models
        yield "cloze_tsne", shape, lambda png, pdf, c=coordinates: tsne_figure(c, png, pdf)


DRAWS = list(_draws())


@pytest.mark.parametrize(("kind", "shape", "draw"), DRAWS, ids=[f"{k}-{s}" for k, s, _ in DRAWS])
def test_every_figure_holds_its_layout_at_the_shapes_people_make(kind, shape, draw, tmp_path):
    png, pdf = tmp_path / f"{kind}.png", tmp_path / f"{kind}.pdf"
    draw(png, pdf)  # a collapsed layout is matplotlib's warning, an error in save_figure
    assert pdf.stat().st_size > 0
    band = blank_band(png)
    assert band <= BLANK_SHARE, f"{kind} at {shape}: a blank band takes {band:.0%} of the height ({png})"
