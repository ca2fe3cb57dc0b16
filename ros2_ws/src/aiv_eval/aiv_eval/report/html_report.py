"""Self-contained HTML report: ``report.html`` (index) and ``episodes/ep_<index>.html`` (one per selected
episode). Inline CSS and SVG only (charts drawn by matplotlib: :mod:`.charts`, :mod:`.sector_ring`); crops are
embedded as data URIs; every piece of text is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from aiv_dataset.levels import level_name
from aiv_dataset.vocabulary import DIRECTIONS

from ..analysis.compare import runs_table_rows
from ..records.episode import EpisodeRecord, is_prediction_correct
from ..records.store import LoadedRun
from .charts import (
    ScatterPoint,
    accuracy_asd_scatter_svg,
    category_heatmap_svg,
    nav_failure_bars_svg,
    steps_chart_svg,
)
from .crops import crop_data_uri
from .markdown_report import PAIR_TYPE_LABELS, level_tables
from .sector_ring import sector_ring_svg
from .step_curves import step_curves

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px auto;max-width:1200px;
color:#111;padding:0 16px;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0;font-size:0.9em}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1a7f37;font-weight:600}.bad{color:#c62828;font-weight:600}.muted{color:#666}
.charts{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
.crops{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;border:1px solid #ddd;padding:6px;background:#fafafa;font-size:0.8em;max-width:270px}
figure img{display:block;max-width:256px;max-height:256px}
td.state-Matched{background:#c7e9c0}td.state-Contradictory{background:#fcbba1}td.state-Missing{background:#eee}
.legend span{display:inline-block;margin-right:14px}
.swatch{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:4px;border:1px solid #888}
code{background:#f4f4f4;padding:0 3px}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def html_page(title: str, body: str) -> str:
    """One self-contained page: the shared inline CSS, ``title`` (escaped) and ``body`` (already HTML)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def _acc(x: float | None, decimals: int = 4) -> str:
    return "–" if x is None else f"{x:.{decimals}f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _degraded(m: Mapping[str, Any]) -> str:
    """Scored episodes some of whose model calls failed, and their accuracy against the others'."""
    block = m.get("degraded_episodes") or {"count": 0}
    if not block["count"]:
        return "0"
    return f"{block['count']}: {_acc(block['accuracy'])} ({_acc(block['others_accuracy'])})"


def _ci(ci: Sequence[float] | None) -> str:
    return "–" if not ci else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], num_cols: Sequence[int] = ()) -> str:
    """Rows are already-escaped HTML cell contents."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{c}</td>' if i in num_cols else f"<td>{c}</td>" for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def episode_page_name(record: EpisodeRecord) -> str:
    return f"ep_{record.episode_index:06d}.html"


# ------------------------------------------------------------------------------------------------ index


def _overall_table(m: Mapping[str, Any]) -> str:
    nav = m["nav_stats"]
    diag = m["diagnostic_stats"]
    flips = m["flip_stats"]
    rows = [
        ("Accuracy", _acc(m["accuracy"])),
        ("95% CI (Wilson)", _ci(m["confidence_intervals"]["accuracy"])),
        (
            f"95% CI (instance bootstrap, {m['bootstrap']['resamples']} resamples, "
            f"{m['bootstrap']['n_clusters']} instances)",
            _ci(m["bootstrap"]["accuracy"]),
        ),
        ("ASD (average steps)", f"{m['asd']:.2f}"),
        ("Scored episodes", str(m["total_episodes"])),
        ("Correct / wrong", f"{m['correct_count']} / {m['wrong_count']}"),
        ("Infra failures (excluded)", str(m["infra_failures"]["count"])),
        ("Scored episodes with failed model calls: accuracy (others')", _degraded(m)),
        ("First-view accuracy", _acc(diag["first_view_accuracy"])),
        ("Average effective views", f"{diag['avg_effective_views']:.2f}"),
        ("NavFail per episode (episodes with ≥1 failure)", _pct(nav["nav_failure_rate_per_episode"])),
        ("NavFail per step", _pct(nav["nav_failure_rate_per_step"])),
        ("Failures per episode", f"{nav['avg_nav_failures_per_episode']:.2f}"),
        ("Episodes with an unreachable request", _pct(m["nav_fail_variants"]["episodes_with_unreachable"])),
        (
            "Episodes that exhausted the budget or hit an unreachable sector",
            _pct(m["nav_fail_variants"]["episodes_budget_exhausted_or_unreachable"]),
        ),
        ("Failures: unreachable / trap", f"{nav['nav_fail_unreachable']} / {nav['nav_fail_trap']}"),
        (
            "Episodes with a prediction flip",
            f"{flips['episodes_with_flip']} (mean flips {flips['mean_flips']:.2f})",
        ),
        (
            "Unsure counted as negative",
            "yes" if m["evaluation"]["unsure_as_negative"] else "no (counted wrong)",
        ),
    ]
    if "wall_time_s" in m:
        rows.append(("Wall time", f"{m['wall_time_s']:.1f} s"))
    return _table(["Metric", "Value"], [(_e(a), _e(b)) for a, b in rows], num_cols=(1,))


def _pair_type_table(m: Mapping[str, Any]) -> str:
    rows = []
    ci = m["confidence_intervals"]["per_pair_type"]
    flips = m["flip_stats"]["per_pair_type"]
    for pt, d in m["per_pair_type"].items():
        rows.append(
            [
                _e(PAIR_TYPE_LABELS.get(pt, pt) + f" ({pt})"),
                str(d["total"]),
                _acc(d["accuracy"]),
                _ci(ci.get(pt)),
                f"{d['asd']:.2f}",
                str(d["nav_fail_unreachable"]),
                str(d["nav_fail_trap"]),
                _acc(d["first_view_accuracy"]),
                f"{d['avg_effective_views']:.2f}",
                str(flips.get(pt, {}).get("episodes_with_flip", 0)),
            ]
        )
    headers = ["Pair type", "N", "Accuracy", "95% CI (Wilson)", "ASD", "Unreachable", "Trap", "First-view",
               "Eff. views", "Flip episodes"]  # fmt: skip
    return _table(headers, rows, num_cols=range(1, 10))


def _flip_table(m: Mapping[str, Any]) -> str:
    dirs = m["flip_stats"]["flip_direction"]
    return _table(["Direction", "Episodes"], [(_e(k), str(v)) for k, v in dirs.items()], num_cols=(1,))


def _small_counts(counts: Mapping[str, Any], header: str) -> str:
    return _table([header, "Count"], [(_e(k), _e(v)) for k, v in counts.items()], num_cols=(1,))


def _model_calls_table(m: Mapping[str, Any]) -> str:
    mc = m["model_calls"]
    rows = [(_e(k), str(v), f"{mc['per_episode_mean'][k]:.2f}") for k, v in mc["totals"].items()]
    rows.append(("<b>total</b>", str(mc["total"]), f"{mc['per_episode_mean_total']:.2f}"))
    return _table(["Model", "Calls", "Per episode"], rows, num_cols=(1, 2))


def _runs_table(rows: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for r in rows:
        out.append(
            [
                _e(r["name"]),
                _e(r["nbv"] if r["nbv"] is not None else "–"),
                _e(r["fusion"] if r["fusion"] is not None else "–"),
                _e(r["query_mode"] if r["query_mode"] is not None else "–"),
                str(r["n"]),
                _acc(r["accuracy"], 3),
                _acc(r["positive"], 3),
                _acc(r["neg_same"], 3),
                _acc(r["neg_diff"], 3),
                f"{r['asd']:.2f}",
                _pct(r["nav_fail_per_episode"]),
                _acc(r["first_view_accuracy"], 3),
                _ci(r["wilson_ci"]),
                _ci(r["bootstrap_ci"]),
            ]
        )
    headers = ["Run", "NBV", "Fusion", "Query", "N", "Acc", "Pos", "N_S", "N_D", "ASD", "NavFail/ep",
               "First-view", "95% CI (Wilson)", "95% CI (bootstrap)"]  # fmt: skip
    return _table(headers, out, num_cols=range(4, 14))


def _episode_index_table(records: Sequence[EpisodeRecord], pages: Mapping[str, str], ua: bool) -> str:
    rows = []
    for r in records:
        if r.is_ok:
            ok = is_prediction_correct(r.prediction, r.label, ua)
            verdict = '<span class="ok">correct</span>' if ok else '<span class="bad">wrong</span>'
        else:
            verdict = f'<span class="bad">infra failure</span>: {_e(r.failure_reason)}'
        link = pages.get(r.episode_key)
        key = f'<a href="{_e(link)}">{_e(r.episode_key)}</a>' if link else _e(r.episode_key)
        rows.append(
            [
                str(r.episode_index),
                key,
                _e(r.pair_type),
                _e(r.target_object_category),
                _e(r.prediction),
                str(r.label),
                verdict,
                str(r.steps),
                str(r.nav_failures),
                _e(r.stop_reason),
            ]
        )
    headers = ["#", "Episode", "Pair type", "Target category", "Prediction", "Label", "Result", "Steps",
               "Nav fails", "Stop"]  # fmt: skip
    return _table(headers, rows, num_cols=(0, 5, 7, 8))


def render_index_html(
    primary: LoadedRun,
    metrics: Mapping[str, Any],
    *,
    others: Sequence[tuple[LoadedRun, Mapping[str, Any]]] = (),
    listed: Sequence[EpisodeRecord] = (),
    pages: Mapping[str, str] | None = None,
) -> str:
    """The index page of a run (``others`` add the runs table and more scatter points)."""
    pages = pages or {}
    m = metrics
    info = m["config_info"]
    title = f"AIV evaluation report — {primary.name}"
    body = [f"<h1>{_e(title)}</h1>"]
    cfg_bits = ", ".join(f"{k}: {v}" for k, v in info.items() if v is not None)
    body.append(
        f'<p class="muted">Run dir <code>{_e(primary.run_dir)}</code> · run id <code>{_e(primary.run_config.run_id)}'
        f"</code> · index <code>{_e(primary.run_config.index_file)}</code>"
        + (f" · {_e(cfg_bits)}" if cfg_bits else "")
        + "</p>"
    )
    if primary.torn_tail is not None:
        body.append(
            f'<p class="bad">results.jsonl ends with an unterminated line '
            f"({primary.torn_tail.dropped_bytes} bytes) that was ignored.</p>"
        )
    body.append("<h2>Metrics</h2>")
    body.append(_overall_table(m))
    body.append("<h2>Per pair type</h2>")
    body.append(_pair_type_table(m))
    body.append("<h2>Charts</h2>")
    points = [ScatterPoint(primary.name, m["asd"], m["accuracy"], True)]
    points += [ScatterPoint(run.name, om["asd"], om["accuracy"]) for run, om in others]
    groups = [
        (PAIR_TYPE_LABELS.get(pt, pt), d["nav_fail_unreachable"], d["nav_fail_trap"])
        for pt, d in m["per_pair_type"].items()
    ]
    groups.append(("all", m["nav_stats"]["nav_fail_unreachable"], m["nav_stats"]["nav_fail_trap"]))
    body.append('<div class="charts">')
    body.append(f"<div><h3>Accuracy per category × pair type</h3>{category_heatmap_svg(m)}</div>")
    body.append(f"<div><h3>Accuracy vs ASD</h3>{accuracy_asd_scatter_svg(points)}</div>")
    body.append(f"<div><h3>Navigation failures</h3>{nav_failure_bars_svg(groups)}</div>")
    curves = step_curves(primary.records, m["evaluation"]["unsure_as_negative"])
    body.append(
        f"<div><h3>Accuracy and acceptance against steps</h3>{steps_chart_svg(curves, m['asd'])}</div>"
    )
    body.append("</div>")
    if others:
        body.append("<h2>Runs</h2>")
        body.append(
            _runs_table(
                runs_table_rows([primary] + [r for r, _ in others], metrics=[m] + [x for _, x in others])
            )
        )
    if "levels" in m:
        body.append("<h2>Views by height level</h2>")
        for caption, headers, rows in level_tables(m["levels"]):
            body.append(f"<h3>{_e(caption)}</h3>")
            body.append(_table(headers, [[_e(cell) for cell in row] for row in rows], num_cols=range(1, 10)))
    body.append("<h2>Prediction flips</h2>")
    body.append(_flip_table(m))
    body.append("<h2>Stop reasons</h2>")
    body.append(_small_counts(m["stop_reasons"], "Stop reason"))
    body.append("<h2>Model calls</h2>")
    body.append(_model_calls_table(m))
    if m["infra_failures"]["count"]:
        body.append("<h2>Infra failures</h2>")
        body.append(_small_counts(m["infra_failures"]["reasons"], "Reason"))
    body.append("<h2>Episodes</h2>")
    body.append(
        f'<p class="muted">{len(pages)} episode page(s): every wrong episode and infra failure, plus a fixed '
        "sample of correct ones (within the page limit). All records are in results.jsonl.</p>"
    )
    body.append(_episode_index_table(listed, pages, m["evaluation"]["unsure_as_negative"]))
    return html_page(title, "\n".join(body))


# ------------------------------------------------------------------------------------------------ episode


def _attribute_table(record: EpisodeRecord) -> str:
    names: list[str] = []
    expected: dict[str, str] = {}
    for s in record.transcript:
        for a in s.attributes:
            if a.name not in expected:
                names.append(a.name)
                expected[a.name] = a.expected
    if not names:
        return '<p class="muted">No attribute rows were logged.</p>'
    headers = ["Attribute", "Expected"] + [f"Step {s.step}" for s in record.transcript]
    rows = []
    for name in names:
        row = [f"<code>{_e(name)}</code>", _e(expected[name])]
        for s in record.transcript:
            obs = next((x for x in s.attributes if x.name == name), None)
            if obs is None:
                row.append('<span class="muted">–</span>')
                continue
            tip = (
                f"observed {obs.observed or '(none)'}; decision {obs.state}; reconciled {obs.reconciled_state}; "
                f"votes M {obs.votes_matched:.2f} / C {obs.votes_contradicted:.2f}"
            )
            row.append(
                f'<span title="{_e(tip)}">{_e(obs.observed or "–")} → {_e(obs.state)}'
                f'<br><span class="muted">rec. {_e(obs.reconciled_state)} · M {obs.votes_matched:.2f} / '
                f"C {obs.votes_contradicted:.2f}</span></span>"
            )
        rows.append(row)
    # colour each step cell by the decision state
    html_rows = []
    for name, row in zip(names, rows, strict=True):
        cells = [f"<td>{row[0]}</td>", f"<td>{row[1]}</td>"]
        for s, cell in zip(record.transcript, row[2:], strict=True):
            obs = next((x for x in s.attributes if x.name == name), None)
            cls = f' class="state-{_e(obs.state)}"' if obs is not None else ""
            cells.append(f"<td{cls}>{cell}</td>")
        html_rows.append(f"<tr>{''.join(cells)}</tr>")
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(html_rows)}</tbody></table>"


def _steps_table(record: EpisodeRecord) -> str:
    rows = []
    for s in record.transcript:
        rows.append(
            [
                str(s.step),
                _e(f"{s.sector} {DIRECTIONS[s.sector]}" + (f" · {level_name(s.level)}" if s.level else "")),
                _e(s.capture_tag or "–"),
                f"{s.detection_confidence:.2f}",
                _e(s.decision),
                _e(s.step_prediction),
                _e(s.nav_rel or "–"),
                _e(s.outcome),
                "yes" if s.trap_view else "",
                "yes" if s.duplicate_view else "",
                _e(s.nbv_reason),
            ]
        )
    headers = ["Step", "Sector", "Capture", "Det. conf", "Decision", "Step pred.", "Move", "Outcome", "Trap",
               "Duplicate", "NBV reason"]  # fmt: skip
    return _table(headers, rows, num_cols=(0, 3))


def _crops(record: EpisodeRecord, run_dir: Path) -> str:
    figs = []
    for s in record.transcript:
        uri = crop_data_uri(run_dir, s.crop_file)
        if uri is not None:
            img = f'<img src="{uri}" alt="{_e(f"crop at step {s.step}")}">'
        elif s.crop_file:
            img = f'<p class="muted">crop {_e(s.crop_file)} not found</p>'
        else:
            img = '<p class="muted">no crop logged</p>'
        caption = (
            f"step {s.step} · sector {s.sector} ({DIRECTIONS[s.sector]}) · {s.capture_tag or '–'} · "
            f"conf {s.detection_confidence:.2f} · {s.decision}"
            + (" · duplicate view" if s.duplicate_view else "")
        )
        figs.append(f"<figure>{img}<figcaption>{_e(caption)}</figcaption></figure>")
    return f'<div class="crops">{"".join(figs)}</div>' if figs else '<p class="muted">No steps logged.</p>'


def render_episode_html(
    record: EpisodeRecord, run_dir: Path, *, unsure_as_negative: bool, index_href: str
) -> str:
    correct = record.is_ok and is_prediction_correct(record.prediction, record.label, unsure_as_negative)
    if not record.is_ok:
        verdict = f'<span class="bad">infra failure</span> — {_e(record.failure_reason)}'
    else:
        verdict = '<span class="ok">correct</span>' if correct else '<span class="bad">wrong</span>'
    title = f"Episode {record.episode_index}: {record.episode_key}"
    summary = [
        ("Pair type", _e(record.pair_type)),
        ("Label", str(record.label)),
        ("Prediction", _e(record.prediction)),
        ("Result", verdict),
        ("Steps", str(record.steps)),
        ("Stop reason", _e(record.stop_reason)),
        ("Target", _e(f"{record.target_object_id} ({record.target_object_category})")),
        ("Query object", _e(f"{record.object_id} ({record.query_object_category})")),
        ("Category assumed by the agent", _e(record.category or "–")),
        ("Query mode", _e(record.query_mode or "–")),
        ("Nav failures (unreachable / trap)", f"{record.nav_fail_unreachable} / {record.nav_fail_trap}"),
        ("Effective views", str(record.effective_views)),
        ("First-view prediction", _e(record.first_view_prediction or "–")),
        ("Step predictions", _e(" → ".join(record.step_predictions) or "–")),
        ("Flips / direction", _e(f"{record.prediction_flips} / {record.flip_direction or '–'}")),
        ("Attempts", str(record.attempts)),
        ("Model calls", _e(", ".join(f"{k}: {v}" for k, v in record.model_calls.items()) or "–")),
    ]
    body = [
        f'<p><a href="{_e(index_href)}">← back to the report</a></p>',
        f"<h1>{_e(title)}</h1>",
        _table(["Field", "Value"], summary),
        "<h2>Query descriptions</h2>",
        "<ol>" + "".join(f"<li>{_e(d)}</li>" for d in record.query_descriptions) + "</ol>",
        "<h2>Sectors</h2>",
        '<div class="charts">',
        sector_ring_svg(record),
        '<div class="legend">'
        '<span><span class="swatch" style="background:#9ecae1"></span>visited (number = order)</span>'
        '<span><span class="swatch" style="background:#fdae6b"></span>trap arrival (T)</span>'
        '<span><span class="swatch" style="background:#fff;border:2px dashed #d62728"></span>'
        "failed move target (✗)</span>"
        '<span><span class="swatch" style="background:#fff;border:3px solid #111"></span>start sector</span>'
        "</div></div>",
        "<h2>Steps</h2>",
        _steps_table(record),
        "<h2>Crops</h2>",
        _crops(record, run_dir),
        "<h2>Attributes over steps</h2>",
        _attribute_table(record),
    ]
    return html_page(title, "\n".join(body))
