"""``trust_table.html``: the reliability diagrams and risk–coverage curves of ``aiv-eval trust-table`` as charts.

``trust_table.json`` keeps both as numbers per row (:mod:`aiv_eval.evidence.trust_metrics` defines them);
this page draws them, one curve per row, in one self-contained HTML file beside the JSON:

* **reliability diagram**: per score bin with episodes, the share of positive pairs (y) against the mean score
  (x); a calibrated score lies on the diagonal;
* **risk–coverage**: per threshold t = 0.50 .. 0.99 (YES when score ≥ t, NO when score ≤ 1 − t, the rest
  abstain), the risk 1 − YES-precision (y) against the decided share (x); thresholds with no YES leave a gap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from .figures import chart_style, inline_svg, new_figure
from .html_report import html_page

#: Line styles once the ten colours of the cycle are used up.
_DASHES = ("-", "--", ":", "-.")


def _style(index: int) -> dict[str, Any]:
    return {"color": f"C{index % 10}", "linestyle": _DASHES[(index // 10) % len(_DASHES)]}


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def reliability_svg(rows: Sequence[Mapping[str, Any]]) -> str:
    """One reliability curve per row, over the diagonal of a perfectly calibrated score."""
    tips: dict[str, str] = {}
    with chart_style():
        figure = new_figure(5.4, 4.6)
        ax = figure.add_subplot()
        ax.plot([0, 1], [0, 1], color="#999", linewidth=1, linestyle=":", label="calibrated")
        for i, row in enumerate(rows):
            bins = [b for b in row.get("reliability", []) if b.get("n")]
            xs = [_number(b["mean_score"]) for b in bins]
            ys = [_number(b["positive_share"]) for b in bins]
            ax.plot(xs, ys, marker="o", markersize=4, label=row["name"], gid=f"row-{i}", **_style(i))
            tips[f"row-{i}"] = f"{row['name']}: ECE {_fmt(row.get('ece'))}; " + "; ".join(
                f"bin {b['bin']}: n {b['n']}, mean score {b['mean_score']}, positive share {b['positive_share']}"
                for b in bins
            )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("mean score in the bin")
        ax.set_ylabel("share of positive pairs")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=2, fontsize=7)
        return inline_svg(figure, css_class="reliability", label="Reliability diagram per row", tips=tips)


def risk_coverage_svg(rows: Sequence[Mapping[str, Any]]) -> str:
    """One risk–coverage curve per row (risk = 1 − YES-precision among the decided episodes)."""
    tips: dict[str, str] = {}
    with chart_style():
        figure = new_figure(5.4, 4.6)
        ax = figure.add_subplot()
        for i, row in enumerate(rows):
            points = row.get("risk_coverage", [])
            xs = [_number(p["coverage"]) for p in points]
            ys = [math.nan if p["yes_precision"] is None else 1.0 - p["yes_precision"] for p in points]
            ax.plot(xs, ys, marker=".", markersize=5, label=row["name"], gid=f"row-{i}", **_style(i))
            tips[f"row-{i}"] = f"{row['name']}: " + "; ".join(
                f"t {p['threshold']:.2f}: coverage {p['coverage']}, YES {p['yes']}, "
                f"YES-precision {'–' if p['yes_precision'] is None else p['yes_precision']}"
                for p in points
            )
        ax.set_xlim(0, 1.02)
        ax.set_ylim(bottom=-0.02)  # a row without risk (every YES right) stays visible on the axis
        ax.set_xlabel("coverage (decided share)")
        ax.set_ylabel("risk (1 − YES-precision)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=2, fontsize=7)
        return inline_svg(figure, css_class="risk-coverage", label="Risk–coverage curve per row", tips=tips)


def _fmt(value: Any, digits: int = 3) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _summary_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(
        f"<th>{h}</th>" for h in ("Row", "N", "Acc", "YES", "YES-precision", "ECE", "Brier", "AUROC")
    )
    body = []
    for row in rows:
        cells = [
            str(row.get("n", "–")),
            _fmt(row.get("accuracy")),
            str(row.get("yes", "–")),
            _fmt(row.get("yes_precision")),
            _fmt(row.get("ece")),
            _fmt(row.get("brier")),
            _fmt(row.get("auroc")),
        ]
        body.append(
            f"<tr><td>{escape(str(row['name']))}</td>"
            + "".join(f'<td class="num">{c}</td>' for c in cells)
            + "</tr>"
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_trust_page(document: Mapping[str, Any]) -> str:
    """The page of one ``trust_table.json`` document."""
    rows = list(document.get("rows", []))
    title = f"Trust table — {document.get('dataset', '?')} / {document.get('backend', '?')}"
    body = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">{len(rows)} row(s); acceptance ceiling {escape(str(document.get("ceiling", "–")))}. '
        "The numbers of both charts are in trust_table.json (rows[].reliability, rows[].risk_coverage); "
        "hover a curve for them.</p>",
        _summary_table(rows),
        '<div class="charts">',
        '<div style="max-width:560px"><h2>Reliability diagram</h2>'
        '<p class="muted">Ten equal score bins; share of positive pairs against the mean score of each bin '
        f"with episodes. A calibrated score lies on the diagonal.</p>{reliability_svg(rows)}</div>",
        '<div style="max-width:560px"><h2>Risk–coverage</h2>'
        '<p class="muted">Thresholds t = 0.50 … 0.99: YES when score ≥ t, NO when score ≤ 1 − t, the rest '
        "abstain; risk = 1 − YES-precision among them, coverage = decided share.</p>"
        f"{risk_coverage_svg(rows)}</div>",
        "</div>",
    ]
    return html_page(title, "\n".join(body))


__all__ = ["reliability_svg", "render_trust_page", "risk_coverage_svg"]
