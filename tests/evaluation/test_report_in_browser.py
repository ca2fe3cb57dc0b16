"""The report's and the trust table's charts as a browser shows them: real headless Chromium, real pixels.

Each chart is cut out of the page and rendered alone, so that a colour found on the screenshot can only come
from that chart: every plotted series must show up in its own colour (a chart that failed to draw, or drew
one series over another, does not). The whole pages are rendered too, and must not come out blank.
Skipped without a browser unless AIV_REQUIRE_BROWSER=1 (tests/support/browser.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from aiv_eval import ResultsStore
from aiv_eval.evidence.trust_metrics import reliability_diagram, risk_coverage
from aiv_eval.report import write_report
from aiv_eval.report.trust_page import render_trust_page
from PIL import ImageStat
from support.browser import browser, colour_pixels, screenshot, standalone_page

from .builders import index_entry, record, run_config, six_episodes

#: Enough pixels of one colour for a marker or a bar, far more than anti-aliased edges of another colour give.
SEEN = 20


@pytest.fixture(scope="module", autouse=True)
def _needs_a_browser() -> None:
    browser()


@pytest.fixture
def report(tmp_path: Path):
    run, other = tmp_path / "run", tmp_path / "other"
    records = six_episodes()
    records[1] = record(
        1, index_entry(episode="ep2", target="mugB"), "No", ["Yes", "Yes", "No"],
        outcomes=["moved", "unreachable", "none"], traps=[True, False, False], sectors=[0, 1, 1],
        nav_rels=["front-left", "back", None], stop_reason="final",
    )  # fmt: skip
    with ResultsStore.open(run, run_config(name="primary")) as store:
        for rec in records:
            store.append(rec)
    with ResultsStore.open(other, run_config(name="other", seed=1)) as store:
        for rec in six_episodes()[:3]:
            store.append(rec)
    return write_report([run, other], bootstrap_resamples=50)


def _chart(html: str, css_class: str) -> str:
    found = re.search(rf'<svg class="{css_class}".*?</svg>', html, re.S)
    assert found is not None, f"no {css_class} chart"
    return found.group(0)


def _render_alone(svg: str, tmp_path: Path, name: str):
    image = screenshot(standalone_page(svg, tmp_path / f"{name}.html"), tmp_path / f"{name}.png", (900, 800))
    assert max(ImageStat.Stat(image).stddev) > 10, f"{name}: blank screenshot"
    return image


def _heatmap_colour(accuracy: float) -> str:
    from matplotlib import colormaps

    r, g, b, _ = colormaps["RdYlGn"](accuracy)
    return f"#{round(255 * r):02x}{round(255 * g):02x}{round(255 * b):02x}"


@pytest.mark.parametrize(
    ("css_class", "colours"),
    [
        # accuracy, acceptance, false acceptance, episodes still looking
        ("steps", ("#1f77b4", "#2ca02c", "#d62728", "#d9d9d9")),
        ("navbars", ("#4c78a8", "#f58518")),
        ("scatter", ("#d62728", "#1f77b4")),  # the primary run, the other run
        ("heatmap", ("overall-1", "overall-0.5", "no-data")),
    ],
)
def test_every_series_of_the_report_charts_is_on_screen(
    report, tmp_path: Path, css_class: str, colours
) -> None:
    named = {"overall-1": _heatmap_colour(1.0), "overall-0.5": _heatmap_colour(0.5), "no-data": "#e0e0e0"}
    image = _render_alone(_chart(report.html.read_text(), css_class), tmp_path, css_class)
    for colour in colours:
        assert colour_pixels(image, named.get(colour, colour)) >= SEEN, f"{css_class}: {colour} not drawn"


def test_the_report_page_and_an_episode_page_render(report, tmp_path: Path) -> None:
    page = screenshot(report.html, tmp_path / "report.png", (1200, 2600))
    assert max(ImageStat.Stat(page).stddev) > 10
    # the charts drew inside the page as well: the steps chart's acceptance and the failure bars
    assert colour_pixels(page, "#2ca02c") >= SEEN and colour_pixels(page, "#4c78a8") >= SEEN
    episode = report.html.parent / "episodes" / "ep_000001.html"
    ring = _render_alone(_chart(episode.read_text(), "ring"), tmp_path, "ring")
    # visited, trap arrival, the target (and the failed move target's dashes)
    for colour in ("#9ecae1", "#fdae6b", "#d62728"):
        assert colour_pixels(ring, colour) >= SEEN, f"ring: {colour} not drawn"
    assert max(ImageStat.Stat(screenshot(episode, tmp_path / "episode.png")).stddev) > 10


def _trust_document() -> dict:
    """Three rows of made-up scores: well calibrated, over-confident, and one that never says YES."""
    labels = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]
    rows = []
    for name, scores in (
        ("calibrated", [0.95, 0.85, 0.75, 0.65, 0.05, 0.15, 0.25, 0.35, 0.55, 0.45]),
        ("over-confident", [0.99, 0.99, 0.98, 0.2, 0.97, 0.02, 0.01, 0.9, 0.6, 0.8]),
        ("never YES <b>", [0.3, 0.2, 0.1, 0.4, 0.1, 0.2, 0.3, 0.4, 0.2, 0.1]),
    ):
        rows.append(
            {"name": name, "n": len(scores), "accuracy": 0.5, "yes": 0, "yes_precision": None, "ece": 0.1,
             "brier": 0.2, "auroc": 0.7, "risk_coverage": risk_coverage(scores, labels),
             "reliability": reliability_diagram(scores, labels)}
        )  # fmt: skip
    return {"dataset": "made-up", "backend": "oracle", "ceiling": 3, "rows": rows}


def test_the_trust_page_draws_a_curve_per_row(tmp_path: Path) -> None:
    html = render_trust_page(_trust_document())
    assert render_trust_page(_trust_document()) == html  # same bytes every time
    assert "never YES &lt;b&gt;" in html and "never YES <b>" not in html
    reliability, risk = _chart(html, "reliability"), _chart(html, "risk-coverage")
    assert len(re.findall(r'<g id="reliability-row-\d"><title>', reliability)) == 3
    # a curve per row (the row that never says YES has an empty one: no threshold gives it a YES-precision)
    assert len(re.findall(r'<g id="risk-coverage-row-\d"><title>', risk)) == 3
    assert "YES-precision –" in risk
    colours = ("#1f77b4", "#ff7f0e", "#2ca02c")  # matplotlib's C0, C1, C2: the three rows
    image = _render_alone(reliability, tmp_path, "reliability")
    for colour in colours:
        assert colour_pixels(image, colour) >= SEEN, f"reliability: {colour} not drawn"
    image = _render_alone(risk, tmp_path, "risk")
    for colour in colours[:2]:
        assert colour_pixels(image, colour) >= SEEN, f"risk-coverage: {colour} not drawn"
    page = tmp_path / "trust_table.html"
    page.write_text(html, encoding="utf-8")
    assert max(ImageStat.Stat(screenshot(page, tmp_path / "trust.png")).stddev) > 10
