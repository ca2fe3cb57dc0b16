"""Colour naming in CIELAB: every pixel gets the nearest canonical colour of the lexicon.

Why CIELAB: Euclidean distance there roughly follows perceived colour difference, so "nearest prototype"
behaves like a person naming a colour, and lightness (L*) separates navy / blue / light blue or grey /
silver / white along one axis. Each canonical colour has one or two prototypes chosen as typical real-world
examples (a navy blazer, a teal mug), not fitted to any renderer.

Shading moves a surface's pixels along lightness (a light-blue hat's shadowed side looks blue) and adds
camera noise, so shares are read with tolerance: :data:`NEIGHBOURS` lists colours that the same surface
plausibly produces under other light; they give partial support to a claim and never count as evidence
against it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ... import lexicon

#: Typical sRGB examples per canonical colour (several where one name covers distinct looks).
PROTOTYPES_RGB: MappingProxyType[str, tuple[tuple[int, int, int], ...]] = MappingProxyType(
    {
        "black": ((18, 18, 20), (40, 40, 44)),
        "white": ((245, 245, 242), (225, 228, 230)),
        "grey": ((128, 128, 128), (90, 92, 96)),
        "silver": ((190, 192, 196), (170, 172, 175)),
        "red": ((200, 30, 35), (225, 50, 40)),
        "dark red": ((128, 10, 30), (100, 20, 25)),
        "pink": ((240, 150, 180), (225, 70, 150)),
        "orange": ((240, 130, 30), (230, 100, 20)),
        "yellow": ((245, 215, 40), (250, 235, 90)),
        "gold": ((205, 165, 50), (185, 150, 70)),
        "beige": ((220, 200, 160), (210, 190, 150)),
        "cream": ((248, 238, 205), (240, 230, 190)),
        "brown": ((115, 70, 35), (140, 90, 50)),
        "tan": ((205, 160, 110), (190, 145, 95)),
        "olive green": ((115, 115, 35), (100, 105, 45)),
        "green": ((40, 150, 55), (30, 110, 40)),
        "teal": ((0, 128, 128), (40, 170, 165)),
        "light blue": ((150, 195, 235), (170, 210, 240)),
        "blue": ((35, 85, 205), (50, 110, 190)),
        "navy blue": ((25, 35, 95), (30, 45, 80)),
        "purple": ((115, 45, 155), (95, 40, 125)),
        "lavender": ((190, 165, 225), (200, 180, 230)),
    }
)

#: Colours that one physical colour plausibly shows under shading, glare or white-balance shifts.
#: Symmetric by construction below.
_NEIGHBOUR_PAIRS: tuple[tuple[str, str], ...] = (
    ("black", "grey"),
    ("black", "navy blue"),
    ("grey", "silver"),
    ("silver", "white"),
    ("white", "cream"),
    ("cream", "beige"),
    ("beige", "tan"),
    ("tan", "brown"),
    ("tan", "orange"),
    ("brown", "dark red"),
    ("brown", "orange"),
    ("brown", "olive green"),
    ("gold", "yellow"),
    ("gold", "tan"),
    ("gold", "olive green"),
    ("yellow", "cream"),
    ("yellow", "orange"),
    ("red", "dark red"),
    ("red", "orange"),
    ("red", "pink"),
    ("pink", "lavender"),
    ("purple", "lavender"),
    ("purple", "navy blue"),
    ("lavender", "light blue"),
    ("blue", "navy blue"),
    ("blue", "light blue"),
    ("blue", "teal"),
    ("teal", "green"),
    ("green", "olive green"),
    ("grey", "light blue"),
)
NEIGHBOURS: MappingProxyType[str, frozenset[str]] = MappingProxyType(
    {
        name: frozenset(
            {b for a, b in _NEIGHBOUR_PAIRS if a == name} | {a for a, b in _NEIGHBOUR_PAIRS if b == name}
        )
        for name in lexicon.CANONICAL_COLOURS
    }
)

#: Colours without hue; a "light"/"dark" modifier on them is read as white/black-ward lightness.
ACHROMATIC: frozenset[str] = frozenset({"black", "white", "grey", "silver"})

#: Pale colours lose their little chroma in shade or under tinted light and then read as grey/silver/white.
PALE: frozenset[str] = frozenset({"white", "cream", "beige", "light blue", "lavender", "silver", "grey"})

#: Dark colours read as black (or dark grey) in shade.
DARK: frozenset[str] = frozenset({"black", "navy blue", "dark red", "brown", "olive green", "purple", "grey"})


def confusable(name: str) -> frozenset[str]:
    """Colours a surface of colour ``name`` may plausibly *appear as* in some view.

    Wider than :data:`NEIGHBOURS`; used only to decide when a view can contradict a colour claim: an
    object seen as mainly grey does not contradict "white" or "light blue" (shade, tinted light), and one
    seen as black contradicts nothing (unlit side, or the dark face of a device whose colour is elsewhere).
    """
    # Any surface in deep shade, and a phone's screen side, reads black: black never contradicts.
    out = {name, "black"} | set(NEIGHBOURS[name])
    if name in PALE:
        out |= ACHROMATIC - {"black"}
    if name in DARK:
        out |= {"black", "grey"}
    if name == "black":
        out |= DARK
    if name in ACHROMATIC - {"black"}:
        out |= PALE
    return frozenset(out)


COLOUR_NAMES: tuple[str, ...] = tuple(lexicon.CANONICAL_COLOURS)
_INDEX = {name: i for i, name in enumerate(COLOUR_NAMES)}


def srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB values in [0, 255]; any leading shape, last axis 3. Returns float32."""
    c = np.asarray(rgb, dtype=np.float32) / 255.0
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = np.array(
        [
            [0.4124564, 0.3575761, 0.1804375],
            [0.2126729, 0.7151522, 0.0721750],
            [0.0193339, 0.1191920, 0.9503041],
        ],
        dtype=np.float32,
    )
    xyz = linear @ m.T
    xyz /= np.array([0.95047, 1.0, 1.08883], dtype=np.float32)
    eps = 216.0 / 24389.0
    kappa = 24389.0 / 27.0
    f = np.where(xyz > eps, np.cbrt(xyz), (kappa * xyz + 16.0) / 116.0)
    lab = np.empty_like(f)
    lab[..., 0] = 116.0 * f[..., 1] - 16.0
    lab[..., 1] = 500.0 * (f[..., 0] - f[..., 1])
    lab[..., 2] = 200.0 * (f[..., 1] - f[..., 2])
    return lab.astype(np.float32)


def _prototype_table() -> tuple[np.ndarray, np.ndarray]:
    labs, owners = [], []
    for name in COLOUR_NAMES:
        for rgb in PROTOTYPES_RGB[name]:
            labs.append(srgb_to_lab(np.array(rgb, dtype=np.float32)))
            owners.append(_INDEX[name])
    return np.stack(labs).astype(np.float32), np.array(owners, dtype=np.int32)


_PROTO_LAB, _PROTO_OWNER = _prototype_table()

#: Lightness differences count half as much as hue/chroma differences when naming: the same paint spans a
#: wide L* range between lit and shadowed faces, while its hue stays put.
LIGHTNESS_WEIGHT = 0.6


def _nearest(lab_flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    weights = np.array([LIGHTNESS_WEIGHT, 1.0, 1.0], dtype=np.float32)
    labels = np.empty(lab_flat.shape[0], dtype=np.int32)
    dist = np.empty(lab_flat.shape[0], dtype=np.float32)
    for start in range(0, lab_flat.shape[0], 65536):
        chunk = lab_flat[start : start + 65536]
        diff = (chunk[:, None, :] - _PROTO_LAB[None, :, :]) * weights
        dist2 = np.einsum("npk,npk->np", diff, diff)
        best = np.argmin(dist2, axis=1)
        labels[start : start + len(chunk)] = _PROTO_OWNER[best]
        dist[start : start + len(chunk)] = np.sqrt(dist2[np.arange(len(chunk)), best])
    return labels, dist


#: RGB is quantised to this many bits per channel for the naming lookup table (64 levels: steps of 4 in
#: 0..255, far below what changes a colour's name).
LUT_BITS = 6


@functools.cache
def _lookup_table() -> tuple[np.ndarray, np.ndarray]:
    """Colour name and distance for every quantised RGB value, computed once (≈0.3 s) and reused."""
    levels = 1 << LUT_BITS
    step = 256 // levels
    axis = np.arange(levels, dtype=np.float32) * step + (step - 1) / 2.0
    grid = np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), axis=-1).reshape(-1, 3)
    labels, dist = _nearest(srgb_to_lab(grid))
    return labels.astype(np.uint8), dist.astype(np.float32)


def warm_up() -> None:
    """Build the lookup table ahead of the first call (verifier construction time)."""
    _lookup_table()


def name_pixels_rgb(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nearest canonical colour index, its weighted Lab distance) for every pixel of a uint8 RGB image.

    Naming by a lookup table keeps a 200×300 analysis image at ~2 ms instead of ~70 ms of distance maths.
    """
    labels, dist = _lookup_table()
    q = (rgb >> (8 - LUT_BITS)).astype(np.int32)
    index = (q[..., 0] << (2 * LUT_BITS)) | (q[..., 1] << LUT_BITS) | q[..., 2]
    return labels[index].astype(np.int64), dist[index]


def name_pixels(lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the nearest canonical colour, distance to it) for every Lab pixel (shape ``...×3``)."""
    labels, dist = _nearest(lab.reshape(-1, 3).astype(np.float32))
    return labels.reshape(lab.shape[:-1]), dist.reshape(lab.shape[:-1])


def colour_index(name: str) -> int:
    return _INDEX[name]


@dataclass(frozen=True)
class ColourStats:
    """Per-colour shares inside a pixel set, plus the mean lightness of each colour's pixels."""

    shares: np.ndarray
    mean_lightness: np.ndarray
    pixels: int

    def share(self, name: str) -> float:
        return float(self.shares[_INDEX[name]]) if self.pixels else 0.0

    def support(self, name: str, neighbour_weight: float = 0.5) -> float:
        """Share of ``name`` plus a fraction of its shading neighbours' shares (capped at 1)."""
        total = self.share(name) + neighbour_weight * sum(self.share(n) for n in NEIGHBOURS[name])
        return min(1.0, total)

    def ranked(self, k: int = 4) -> list[tuple[str, float]]:
        order = np.argsort(-self.shares)[:k]
        return [(COLOUR_NAMES[i], float(self.shares[i])) for i in order if self.shares[i] > 0]

    def summary(self, k: int = 3) -> str:
        return ", ".join(f"{name} {share:.0%}" for name, share in self.ranked(k)) or "no pixels"


def colour_stats(labels: np.ndarray, lightness: np.ndarray, mask: np.ndarray) -> ColourStats:
    """Shares of each canonical colour among the ``mask`` pixels of a labelled image."""
    selected = labels[mask]
    n = int(selected.size)
    k = len(COLOUR_NAMES)
    if n == 0:
        return ColourStats(np.zeros(k), np.zeros(k), 0)
    counts = np.bincount(selected, minlength=k).astype(np.float64)
    light_sum = np.bincount(selected, weights=lightness[mask].astype(np.float64), minlength=k)
    mean_l = np.divide(light_sum, counts, out=np.zeros(k), where=counts > 0)
    return ColourStats(counts / n, mean_l, n)


def prototype_lightness(name: str) -> float:
    """Mean L* of a colour's prototypes (the reference for "light"/"dark" modifiers)."""
    rows = _PROTO_LAB[_INDEX[name] == _PROTO_OWNER]
    return float(rows[:, 0].mean())


def claimed_names(name: str, modifier: str) -> tuple[str, ...]:
    """Canonical colours that satisfy a (possibly modified) claim.

    "light grey" is satisfied by silver too, "dark blue" by navy; "pale pink" or "light purple" by their
    lighter neighbours. Modifiers without a lightness meaning ("bright", "matte") change nothing.
    """
    lighter = {"grey": "silver", "purple": "lavender", "blue": "light blue", "brown": "tan", "red": "pink"}
    darker = {"grey": "black", "blue": "navy blue", "red": "dark red", "green": "olive green"}
    if modifier in ("light", "pale", "pastel") and name in lighter:
        return (name, lighter[name])
    if modifier in ("dark", "deep") and name in darker:
        return (name, darker[name])
    return (name,)
