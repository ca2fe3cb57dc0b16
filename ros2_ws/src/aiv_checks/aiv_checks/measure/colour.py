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
from aiv_verifier import lexicon

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


#: Pixels named per block: the block's pixel × prototype distances stay near 1 MiB. One 65,536-pixel block
#: held ~100 MiB of temporaries, the largest allocation of a weight-free verifier's start-up, and large freed
#: blocks raise glibc's mmap threshold, so later buffers of that size stay in the heap after use. The names
#: and distances do not depend on the block size (each pixel's row is computed alone).
NAMING_BLOCK = 2048


def _nearest(lab_flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    weights = np.array([LIGHTNESS_WEIGHT, 1.0, 1.0], dtype=np.float32)
    labels = np.empty(lab_flat.shape[0], dtype=np.int32)
    dist = np.empty(lab_flat.shape[0], dtype=np.float32)
    for start in range(0, lab_flat.shape[0], NAMING_BLOCK):
        chunk = lab_flat[start : start + NAMING_BLOCK]
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
    """Colour name and distance for every quantised RGB value, computed once (≈0.2 s) and reused.

    Built one block of RGB values at a time (see :data:`NAMING_BLOCK`), in the ``r``-major order
    :func:`name_pixels_rgb` indexes it by."""
    levels = 1 << LUT_BITS
    step = 256 // levels
    axis = np.arange(levels, dtype=np.float32) * step + (step - 1) / 2.0
    size = levels**3
    labels = np.empty(size, dtype=np.uint8)
    dist = np.empty(size, dtype=np.float32)
    for start in range(0, size, NAMING_BLOCK):
        index = np.arange(start, min(start + NAMING_BLOCK, size))
        rgb = axis[np.stack(np.unravel_index(index, (levels, levels, levels)), axis=-1)]
        block_labels, block_dist = _nearest(srgb_to_lab(rgb))
        labels[start : start + len(index)] = block_labels
        dist[start : start + len(index)] = block_dist
    return labels, dist


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


# -- lighting-tolerant evidence for a colour claim ---------------------------------------------------------------
#
# Names per pixel (above) are good for "how much of the object is light blue", but they turn shading into
# other names (a shaded orange face is named brown) and say nothing about how *incompatible* a pixel is with a
# claim. A decision that can answer No needs that: the checks below compare hue and chroma with the claimed
# colour's prototypes and treat lightness asymmetrically, because light can only darken a surface (shade) or
# tint it a little (white balance), never turn a grey into a saturated blue or a blue into a clear white.


@dataclass(frozen=True)
class ClaimEvidence:
    """How the object's pixels relate to one claimed colour (shares of the object's pixels).

    ``compatible``: pixels that a surface of the claimed colour can produce under shade or a mild cast.
    ``contradicting``: pixels that it cannot (another hue at clear chroma; for saturated claims also clear
    whites/light greys; for achromatic claims saturated colour). The rest (dark neutral shadow, weakly
    coloured pixels) is uninformative. ``neutral_share`` and ``neutral_lightness`` (median L* of the brighter
    half of the neutral pixels) let achromatic claims tell white, grey and black apart.
    """

    compatible: float
    contradicting: float
    neutral_share: float
    neutral_lightness: float


#: Chroma (C*ab) below which a pixel counts as neutral (white/grey/black) and above which as coloured.
NEUTRAL_CHROMA = 9.0
COLOURED_CHROMA = 16.0
#: A claimed hue explains pixels up to this far around the colour wheel (shading keeps the hue, a cast moves
#: it a little); pixels further than ``CONTRADICT_HUE_DEG`` from every claimed hue contradict the claim.
COMPATIBLE_HUE_DEG = 32.0
CONTRADICT_HUE_DEG = 45.0
#: The identity check (colours no description names) is judged more loosely: a hue must lie this far from
#: every named colour, because a description's colour words are approximate (e.g. "brown" for a tan strap).
UNEXPLAINED_HUE_DEG = 60.0
#: Prototypes with at least this chroma are "saturated": a clear white or light grey cannot be them.
SATURATED_CHROMA = 30.0
#: Neutral pixels brighter than this (L*) cannot be a shaded saturated colour.
BRIGHT_NEUTRAL_L = 62.0
#: Pixels this much lighter (L*) than the claimed colour's lightest prototype cannot be that colour.
TOO_LIGHT_L = 35.0
#: Chroma a claimed colour can show: up to this factor of its prototype's chroma plus a slack (casts, noise);
#: pixels beyond ``OVERSATURATED_FACTOR`` times that limit contradict it even at the same hue.
MAX_CHROMA_FACTOR = 1.3
CHROMA_SLACK = 12.0
OVERSATURATED_FACTOR = 1.3


def _hue_distance(h1: np.ndarray, h2: float) -> np.ndarray:
    d = np.abs(h1 - h2) % 360.0
    return np.minimum(d, 360.0 - d)


def claim_evidence(
    lab: np.ndarray, names: tuple[str, ...], hue_tolerance_deg: float = COMPATIBLE_HUE_DEG
) -> ClaimEvidence:
    """Evidence for "the object is <one of names>" from its Lab pixels (N×3).

    ``hue_tolerance_deg`` widens what counts as ``compatible``: a test for a colour's *absence* uses a wider
    one than a test for its presence, because a strong white-balance cast turns some hues (a purple bow goes
    magenta) by more than the default allows, and calling a present colour absent costs a wrong No.
    """
    pixels = np.asarray(lab, dtype=np.float32).reshape(-1, 3)
    n = pixels.shape[0]
    if n == 0:
        return ClaimEvidence(0.0, 0.0, 0.0, 0.0)
    lightness = pixels[:, 0]
    chroma = np.hypot(pixels[:, 1], pixels[:, 2])
    hue = np.degrees(np.arctan2(pixels[:, 2], pixels[:, 1])) % 360.0
    neutral = chroma < NEUTRAL_CHROMA
    coloured = chroma >= COLOURED_CHROMA
    compatible = np.zeros(n, dtype=bool)
    near_hue = np.zeros(n, dtype=bool)  # within the contradiction distance of some claimed hue
    any_saturated = False
    any_achromatic = False
    brightest = max(float(row[0]) for name in names for row in _PROTO_LAB[_INDEX[name] == _PROTO_OWNER])
    for name in names:
        for row in _PROTO_LAB[_INDEX[name] == _PROTO_OWNER]:
            proto_l, proto_c = float(row[0]), float(np.hypot(row[1], row[2]))
            if name in ACHROMATIC:
                any_achromatic = True
                # Neutral at any lightness up to a little above the prototype's (shade darkens only).
                compatible |= (chroma < COLOURED_CHROMA) & (lightness <= proto_l + 15.0)
                continue
            proto_h = float(np.degrees(np.arctan2(row[2], row[1])) % 360.0)
            any_saturated |= proto_c >= SATURATED_CHROMA
            distance = _hue_distance(hue, proto_h)
            min_chroma = max(4.0, 0.2 * proto_c)
            # Shade and casts lower or barely raise chroma: a tan surface never shows a saturated yellow.
            max_chroma = MAX_CHROMA_FACTOR * proto_c + CHROMA_SLACK
            compatible |= (
                (distance <= hue_tolerance_deg)
                & (chroma >= min_chroma)
                & (chroma <= max_chroma)
                & (lightness <= proto_l + 20.0)
            )
            near_hue |= (distance <= CONTRADICT_HUE_DEG) & (chroma <= OVERSATURATED_FACTOR * max_chroma)
    if any_achromatic and not (any_saturated or near_hue.any()):
        contradicting = chroma >= 25.0
    else:
        contradicting = coloured & ~near_hue
        if any_achromatic:
            contradicting &= chroma >= 25.0
        if any_saturated and not any_achromatic:
            contradicting |= neutral & (lightness >= BRIGHT_NEUTRAL_L)
        if not any_achromatic:
            # A dark colour (navy, dark red) cannot look much lighter than itself; highlights are small.
            contradicting |= lightness > brightest + TOO_LIGHT_L
    contradicting &= ~compatible
    neutral_l = lightness[neutral]
    if neutral_l.size:
        upper = neutral_l[neutral_l >= np.median(neutral_l)]
        neutral_lightness = float(np.median(upper))
    else:
        neutral_lightness = 0.0
    return ClaimEvidence(
        float(compatible.mean()), float(contradicting.mean()), float(neutral.mean()), neutral_lightness
    )


def unexplained_share(
    lab: np.ndarray, mentioned: frozenset[str], min_chroma: float = COLOURED_CHROMA
) -> float:
    """Share of pixels that are clearly coloured in a hue no mentioned colour can take (1.0 = all).

    Neutral and weakly coloured pixels never count (shadows, highlights, unmentioned white pages); only
    chroma at or above ``min_chroma`` (``COLOURED_CHROMA`` unless asked for more) whose hue is more than
    ``UNEXPLAINED_HUE_DEG`` from every mentioned chromatic prototype. With no chromatic colour mentioned
    at all, nothing is judged (0.0).
    """
    pixels = np.asarray(lab, dtype=np.float32).reshape(-1, 3)
    hues = [
        float(np.degrees(np.arctan2(row[2], row[1])) % 360.0)
        for name in mentioned
        if name in _INDEX and name not in ACHROMATIC
        for row in _PROTO_LAB[_INDEX[name] == _PROTO_OWNER]
    ]
    if pixels.shape[0] == 0 or not hues:
        return 0.0
    chroma = np.hypot(pixels[:, 1], pixels[:, 2])
    hue = np.degrees(np.arctan2(pixels[:, 2], pixels[:, 1])) % 360.0
    near = np.zeros(pixels.shape[0], dtype=bool)
    for proto_h in hues:
        near |= _hue_distance(hue, proto_h) <= UNEXPLAINED_HUE_DEG
    return float(((chroma >= min_chroma) & ~near).mean())
