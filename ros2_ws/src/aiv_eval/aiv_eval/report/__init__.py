"""Markdown + self-contained HTML reports of evaluation runs.

:func:`write_report` writes, into ``out_dir`` (default: the primary run dir):

* ``report.md`` — metrics tables (overall, per pair type, per category, CIs, flips, stop reasons, model calls,
  a runs table when several runs are given, the list of episode pages);
* ``report.html`` — the same plus charts drawn by matplotlib as inline SVG: the per-category × pair-type
  accuracy heatmap, accuracy vs ASD across the given runs, unreachable-vs-trap failures per pair type, and
  accuracy and acceptance against steps (:mod:`.step_curves`);
* ``episodes/ep_<episode_index>.html`` — one self-contained page per selected episode: sector ring, step table,
  crops (embedded as data URIs), attribute states over steps.

Episode pages: every wrong episode and every infra failure, plus ``correct_sample`` correct ones chosen by a
seeded hash of the key (deterministic), capped at ``max_episode_pages`` (wrong first, then failures, then the
correct sample). Earlier ``episodes/ep_*.html`` files in ``out_dir`` are replaced.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis.metrics import metrics_for_run
from ..analysis.statistics import DEFAULT_RESAMPLES, DEFAULT_SEED
from ..records.episode import EpisodeRecord, is_prediction_correct
from ..records.store import LoadedRun, load_run
from .html_report import episode_page_name, render_episode_html, render_index_html
from .markdown_report import render_markdown

EPISODES_DIR = "episodes"
DEFAULT_CORRECT_SAMPLE = 10


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    html: Path
    episode_pages: tuple[Path, ...]


def select_episodes(
    records: Sequence[EpisodeRecord],
    *,
    unsure_as_negative: bool = True,
    max_pages: int | None = None,
    correct_sample: int = DEFAULT_CORRECT_SAMPLE,
    seed: int = DEFAULT_SEED,
) -> list[EpisodeRecord]:
    """Episodes that get a page, in episode-index order (see the module docstring for the rule)."""
    wrong, infra, correct = [], [], []
    for r in records:
        if not r.is_ok:
            infra.append(r)
        elif is_prediction_correct(r.prediction, r.label, unsure_as_negative):
            correct.append(r)
        else:
            wrong.append(r)
    sample = sorted(correct, key=lambda r: hashlib.sha256(f"{seed}:{r.episode_key}".encode()).hexdigest())
    chosen = wrong + infra + sample[: max(0, correct_sample)]
    if max_pages is not None:
        chosen = chosen[: max(0, max_pages)]
    return sorted(chosen, key=lambda r: (r.episode_index, r.episode_key))


def write_report(
    run_dirs: Sequence[str | os.PathLike[str] | LoadedRun],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    max_episode_pages: int | None = None,
    correct_sample: int = DEFAULT_CORRECT_SAMPLE,
    seed: int = DEFAULT_SEED,
    bootstrap_resamples: int = DEFAULT_RESAMPLES,
    metrics: Mapping[str, Any] | None = None,
) -> ReportFiles:
    """Write the report of ``run_dirs[0]``; the other runs are compared against it (table, scatter).

    ``metrics`` may pass the primary run's already computed metrics (e.g. with ``wall_time_s``).
    """
    if not run_dirs:
        raise ValueError("write_report needs at least one run dir")
    runs = [r if isinstance(r, LoadedRun) else load_run(r) for r in run_dirs]
    primary, others = runs[0], runs[1:]
    m = (
        dict(metrics)
        if metrics is not None
        else metrics_for_run(primary, bootstrap_resamples=bootstrap_resamples)
    )
    other_metrics = [(r, metrics_for_run(r, bootstrap_resamples=bootstrap_resamples)) for r in others]
    out = Path(out_dir) if out_dir is not None else primary.run_dir
    ua = m["evaluation"]["unsure_as_negative"]

    selected = select_episodes(
        primary.records,
        unsure_as_negative=ua,
        max_pages=max_episode_pages,
        correct_sample=correct_sample,
        seed=seed,
    )
    ep_dir = out / EPISODES_DIR
    ep_dir.mkdir(parents=True, exist_ok=True)
    for stale in ep_dir.glob("ep_*.html"):
        stale.unlink()
    pages: dict[str, str] = {}
    written = []
    for r in selected:
        name = episode_page_name(r)
        path = ep_dir / name
        path.write_text(
            render_episode_html(r, primary.run_dir, unsure_as_negative=ua, index_href="../report.html"),
            encoding="utf-8",
        )
        pages[r.episode_key] = f"{EPISODES_DIR}/{name}"
        written.append(path)
    listed = sorted(
        {r.episode_key: r for r in [*selected, *(r for r in primary.records if not r.is_ok)]}.values(),
        key=lambda r: (r.episode_index, r.episode_key),
    )
    html_path = out / "report.html"
    html_path.write_text(
        render_index_html(primary, m, others=other_metrics, listed=listed, pages=pages), encoding="utf-8"
    )
    md_path = out / "report.md"
    md_path.write_text(
        render_markdown(primary, m, others=other_metrics, listed=listed, pages=pages), encoding="utf-8"
    )
    return ReportFiles(md_path, html_path, tuple(written))


__all__ = ["ReportFiles", "select_episodes", "write_report"]
