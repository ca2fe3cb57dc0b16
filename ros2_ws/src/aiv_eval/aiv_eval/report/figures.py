"""matplotlib figures as inline SVG for self-contained HTML pages.

One place holds the settings every chart shares, so that the report needs no display, no other file and no
font on the reader's machine, and the same data always gives the same bytes:

* the figure is laid out by the Agg backend (no window, no display) and saved by matplotlib's SVG writer;
* text is drawn as glyph outlines (``svg.fonttype`` ``path``, DejaVu Sans shipped with matplotlib): every
  browser shows the layout matplotlib measured;
* ids come from a fixed ``svg.hashsalt`` instead of a random one, and no date is written;
* labels are never parsed as mathtext: a run name with ``$`` in it stays plain text.

matplotlib is imported inside the functions only: importing the evaluation never loads it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from html import escape
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

#: rcParams of every chart (style and reproducibility; see the module docstring).
STYLE: dict[RcKeyType, Any] = {
    "svg.hashsalt": "aiv-eval-report",
    "svg.fonttype": "path",
    "text.parse_math": False,
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e3e3e3",
    "grid.linewidth": 0.8,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "figure.dpi": 100.0,
}
#: Metadata left out of the SVG: no date, creator or format lines (the title is set per chart).
_NO_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}
_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)


@contextmanager
def chart_style() -> Iterator[None]:
    """The shared rcParams, for drawing a chart and saving it (the salt is read when the SVG is written)."""
    import matplotlib

    with matplotlib.rc_context(STYLE):
        yield


def new_figure(
    width_in: float, height_in: float, *, layout: Literal["constrained"] | None = "constrained"
) -> Figure:
    """A figure on an Agg canvas, outside pyplot (no global figure list, no interactive backend); ``layout``
    None for a figure whose axes are placed by hand (no layout pass: faster)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width_in, height_in), layout=layout)
    FigureCanvasAgg(figure)
    return figure


def inline_svg(figure: Figure, *, css_class: str, label: str, tips: Mapping[str, str] | None = None) -> str:
    """``figure`` as one ``<svg>`` element to put in HTML.

    Its ids get ``css_class`` as prefix so that several charts on one page never share one; ``label`` is the
    accessible name and title. ``tips`` maps an artist's gid to a tooltip, written as a ``<title>`` inside
    that artist's group (an artist that drew nothing gets none). Call inside :func:`chart_style`.
    """
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={**_NO_METADATA, "Title": label})
    svg = _METADATA.sub("", _PROLOG.sub("", buffer.getvalue(), count=1), count=1)
    prefix = f"{css_class}-"
    svg = re.sub(r'\bid="', f'id="{prefix}', svg)
    svg = svg.replace('xlink:href="#', f'xlink:href="#{prefix}').replace("url(#", f"url(#{prefix}")
    for gid, tip in (tips or {}).items():
        opening = f'<g id="{prefix}{gid}">'  # absent when the artist drew nothing (e.g. no data)
        svg = svg.replace(opening, f"{opening}<title>{escape(tip)}</title>", 1)
    head = (
        f'<svg class="{escape(css_class)}" role="img" aria-label="{escape(label)}" '
        'style="max-width:100%;height:auto" '
    )
    return head + svg.strip()[len("<svg ") :]


__all__ = ["STYLE", "chart_style", "inline_svg", "new_figure"]
