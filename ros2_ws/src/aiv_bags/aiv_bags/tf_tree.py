"""A small, offline stand-in for a tf2 buffer: the transforms of /tf and /tf_static, looked up in time.

tf2 itself is not on PyPI (ros2-from-pypi.md), and a bag is read in one pass anyway, so this keeps every
sample: static edges hold one transform (a later one for the same edge replaces it, as tf2 does), dynamic
edges a time-sorted list. A lookup walks both frames up to their common ancestor and composes the edges,
each dynamic one interpolated at the requested time (linear in translation, slerp in rotation) between
samples at most ``max_interval_ns`` apart, or taken as is when a sample lies within ``tolerance_ns``.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from .geometry import Transform


class TfLookupError(LookupError):
    """No transform between two frames at the requested time; the message says which edge is missing."""


@dataclass
class _Edge:
    parent: str
    static: bool
    stamps: list[int] = field(default_factory=list)
    transforms: list[Transform] = field(default_factory=list)
    source: str = ""  # topic, for messages


class TfTree:
    """Transforms of one bag, by child frame."""

    def __init__(self, *, tolerance_ns: int = 100_000_000, max_interval_ns: int = 1_000_000_000) -> None:
        self.tolerance_ns = tolerance_ns
        self.max_interval_ns = max_interval_ns
        self._edges: dict[str, _Edge] = {}

    def __contains__(self, frame: str) -> bool:
        return frame in self._edges or any(e.parent == frame for e in self._edges.values())

    def frames(self) -> list[str]:
        return sorted({*self._edges, *(e.parent for e in self._edges.values())})

    def add(
        self, parent: str, child: str, stamp_ns: int, transform: Transform, *, static: bool, topic: str
    ) -> None:
        """Record one transform ``parent <- child``. Raises ValueError for a sample tf2 would not accept:
        a frame given two parents, an edge both static and dynamic, a dynamic stamp that does not increase."""
        parent, child = parent.lstrip("/"), child.lstrip("/")
        if not parent or not child:
            raise ValueError(f"transform with an empty frame id ({parent!r} <- {child!r})")
        if parent == child:
            raise ValueError(f"transform from frame {child!r} to itself")
        if not transform.is_finite():
            raise ValueError(f"transform {parent!r} <- {child!r} at stamp {stamp_ns} ns is not finite")
        edge = self._edges.get(child)
        if edge is None:
            edge = self._edges[child] = _Edge(parent, static, source=topic)
        if edge.parent != parent:
            raise ValueError(
                f"frame {child!r} has two parents: {edge.parent!r} (on {edge.source}) and {parent!r}"
            )
        if edge.static != static:
            raise ValueError(f"transform {parent!r} <- {child!r} is on both /tf and /tf_static")
        if static:
            edge.stamps[:], edge.transforms[:] = [stamp_ns], [transform]
            return
        if edge.stamps and stamp_ns <= edge.stamps[-1]:
            kind = "duplicate" if stamp_ns == edge.stamps[-1] else "non-monotonic"
            raise ValueError(
                f"{kind} stamp for transform {parent!r} <- {child!r}: {stamp_ns} ns after {edge.stamps[-1]} ns"
            )
        edge.stamps.append(stamp_ns)
        edge.transforms.append(transform)

    def _edge_at(self, child: str, edge: _Edge, stamp_ns: int) -> Transform:
        if edge.static:
            return edge.transforms[0]
        stamps = edge.stamps
        i = bisect.bisect_left(stamps, stamp_ns)
        if i < len(stamps) and stamps[i] == stamp_ns:
            return edge.transforms[i]
        nearest = min(
            (j for j in (i - 1, i) if 0 <= j < len(stamps)), key=lambda j: abs(stamps[j] - stamp_ns)
        )
        if 0 < i < len(stamps) and stamps[i] - stamps[i - 1] <= self.max_interval_ns:
            t = (stamp_ns - stamps[i - 1]) / (stamps[i] - stamps[i - 1])
            return edge.transforms[i - 1].interpolate(edge.transforms[i], t)
        if abs(stamps[nearest] - stamp_ns) <= self.tolerance_ns:
            return edge.transforms[nearest]
        raise TfLookupError(
            f"no transform {edge.parent!r} <- {child!r} near stamp {stamp_ns} ns on {edge.source} (its "
            f"{len(stamps)} sample(s) span {stamps[0]}..{stamps[-1]} ns; the nearest is "
            f"{abs(stamps[nearest] - stamp_ns) / 1e9:.3f} s away)"
        )

    def _chain(self, frame: str) -> list[str]:
        chain = [frame]
        while chain[-1] in self._edges:
            chain.append(self._edges[chain[-1]].parent)
            if len(chain) > len(self._edges) + 1:
                raise TfLookupError(f"the tf tree has a loop through frame {frame!r}")
        return chain

    def lookup(self, target: str, source: str, stamp_ns: int) -> Transform:
        """``target <- source`` at ``stamp_ns``: maps points of ``source`` into ``target``."""
        target, source = target.lstrip("/"), source.lstrip("/")
        if source not in self:
            raise TfLookupError(f"frame {source!r} is in no transform (known frames: {self.frames()})")
        if target not in self:
            raise TfLookupError(f"frame {target!r} is in no transform (known frames: {self.frames()})")
        up_source, up_target = self._chain(source), self._chain(target)
        common = next((f for f in up_source if f in up_target), None)
        if common is None:
            raise TfLookupError(
                f"frames {target!r} and {source!r} are not connected (their roots are {up_target[-1]!r} and "
                f"{up_source[-1]!r})"
            )
        to_common = Transform((0.0, 0.0, 0.0))
        for frame in up_source[: up_source.index(common)]:  # common <- source
            to_common = self._edge_at(frame, self._edges[frame], stamp_ns).compose(to_common)
        target_to_common = Transform((0.0, 0.0, 0.0))
        for frame in up_target[: up_target.index(common)]:  # common <- target
            target_to_common = self._edge_at(frame, self._edges[frame], stamp_ns).compose(target_to_common)
        return target_to_common.inverse().compose(to_common)
