"""What one verifier call works out once per view and every check reads: the object region, its colours, the
colour tests several checks share, and the one OCR pass.

A view is analysed once, whatever the number of claims asked about it: the object mask, the colour names and
their shares, and (only when some claim needs text) one OCR pass. The colour tests that more than one check
asks (is this colour present on the object? is it clearly absent? does the view show enough of the object to
say so?) live here too, with their settings (:class:`ColourEvidenceSettings`), so that two checks asking the
same question get the same answer and pay for it once.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from aiv_common.setting_fields import setting
from aiv_verifier.core.crop import CROP_PADDING_PX
from aiv_verifier.description.phrases import (
    ColourTerm,
    PhraseInfo,
    analyse_phrase,
    named_colour_terms,
    part_is_see_through,
)
from aiv_verifier.verification.base import ViewInput

from .measure import colour as colour_mod
from .measure.colour import ColourStats, claimed_names, colour_stats
from .measure.ocr import OcrEngine, OcrItem
from .measure.region import ObjectRegion
from .measure.structures import StructureSettings, find_structures

if TYPE_CHECKING:
    from .settings import ClassicalSettings


@dataclass(frozen=True)
class ColourEvidenceSettings:
    """When a claimed colour counts as present on the object, and when as clearly missing from the view."""

    black_supports_only_dark_neutrals: bool = setting(
        True,
        "black pixels never support a colour with hue (they are every colour's unlit side); they still "
        "support black, grey and other dark neutrals",
    )
    present_share: float = setting(
        0.03,
        "a colour covering at least this share of the object counts as present on it (a part colour)",
        minimum=0.0,
        maximum=1.0,
    )
    present_min_pixels: float = setting(
        6.0, "... and it must cover at least this many camera pixels", minimum=0.0
    )
    absent_max_share: float = setting(
        0.001,
        "a colour counts as missing only when at most this share of the object is named that colour",
        minimum=0.0,
        maximum=1.0,
    )
    absent_max_compatible: float = setting(
        0.01,
        "... and at most this share could be that colour under shade or a colour cast",
        minimum=0.0,
    )
    absent_hue_tolerance_deg: float = setting(
        60.0,
        "hue distance (degrees) from a colour's prototypes still counted as that colour when judging it "
        "missing (wider than for a Yes: a strong cast shifts hues)",
        minimum=0.0,
    )


@dataclass
class Claim:
    """One claim to judge: its phrase (an attribute's evidence phrase or a whole description) and, for an
    attribute, its name (a name can make a colour claim the main colour: ``body_color``)."""

    phrase: str
    attribute_name: str = ""

    @cached_property
    def info(self) -> PhraseInfo:
        return analyse_phrase(self.phrase)


def solid_view(region: ObjectRegion, min_box_px: float) -> bool:
    """Whether the view shows enough of the object, face-on enough, for a colour- or shape-based No: a box
    narrower than ``min_box_px`` camera pixels is an edge-on or thin view (a book's pages, a laptop's edge),
    where the region estimate mixes object and background; an ellipse region is only a guess."""
    box = region.source_box
    if region.method == "ellipse" or box is None:
        return False
    short = min(box[2] - box[0], box[3] - box[1]) - 2 * CROP_PADDING_PX
    return short >= min_box_px


class ViewAnalysis:
    """Everything one call computes once and shares between claims (region, colours, OCR)."""

    def __init__(
        self,
        region: ObjectRegion,
        ocr: Callable[[], OcrEngine | None],
        crop: np.ndarray,
        settings: ClassicalSettings,
        descriptions: tuple[str, ...] = (),
        open_frame: bool = False,
    ) -> None:
        self.region = region
        self.settings = settings
        self.descriptions = descriptions
        # The query names a thin frame around see-through parts: its mask mixes in what lies behind it.
        self.open_frame = open_frame
        self._unexplained: dict[float, float] = {}
        self.stats: ColourStats = colour_stats(region.labels, region.lab[..., 0], region.interior)
        self._ocr = ocr  # the verifier's lazy engine: called only when a claim needs text
        self.crop = crop
        self._ocr_items: list[OcrItem] | None = None
        self.ocr_calls = 0
        self.ocr_seconds = 0.0
        self.interior_lab = region.lab[region.interior]
        self._evidence: dict[tuple[tuple[str, ...], float], colour_mod.ClaimEvidence] = {}

    # -- shared measurements --------------------------------------------------------------------------------

    def evidence(
        self, names: tuple[str, ...], hue_tolerance_deg: float = colour_mod.COMPATIBLE_HUE_DEG
    ) -> colour_mod.ClaimEvidence:
        """:func:`.measure.colour.claim_evidence` over the object's pixels, computed once per colour and
        tolerance: the main-colour rules, the absence rules and the reasons of one view ask for the same
        colours several times."""
        key = (names, hue_tolerance_deg)
        if key not in self._evidence:
            self._evidence[key] = colour_mod.claim_evidence(self.interior_lab, names, hue_tolerance_deg)
        return self._evidence[key]

    @functools.cached_property
    def mentioned(self) -> frozenset[str]:
        """Every colour the query's descriptions name."""
        names: set[str] = set()
        for term in named_colour_terms(self.descriptions):  # with the variants a modifier allows
            names.update(claimed_names(term.name, term.modifier))
        return frozenset(names)

    def unexplained_share(self, min_chroma: float = colour_mod.COLOURED_CHROMA) -> float:
        """Share of the object coloured at least ``min_chroma`` in hues no description of the query names
        (computed once per chroma bar; 0.0 without descriptions)."""
        if min_chroma not in self._unexplained:
            self._unexplained[min_chroma] = (
                colour_mod.unexplained_share(self.interior_lab, self.mentioned, min_chroma)
                if self.descriptions
                else 0.0
            )
        return self._unexplained[min_chroma]

    def ocr_engine(self) -> OcrEngine | None:
        """The verifier's OCR engine (built on first use; None without one)."""
        return self._ocr()

    def ocr_items(self) -> list[OcrItem]:
        """What the one OCR pass over the crop read (run on the first call)."""
        if self._ocr_items is None:
            self._ocr_items = []
            engine = self._ocr()
            if engine is not None:
                start = time.perf_counter()
                try:
                    self._ocr_items = engine.read(self.crop)
                except Exception:  # an engine failure must not end the episode
                    self._ocr_items = []
                self.ocr_calls += 1
                self.ocr_seconds += time.perf_counter() - start
        return self._ocr_items

    # -- colour tests shared by several checks --------------------------------------------------------------

    def solid(self) -> bool:
        """:func:`solid_view` with the verifier's ``decisive_min_box_px``."""
        return solid_view(self.region, self.settings.decisive_min_box_px)

    def claim_shares(self, term: ColourTerm) -> tuple[float, float, tuple[str, ...]]:
        """(exact share, support, canonical names) of a claimed colour: support adds half the share of its
        shading neighbours."""
        names = claimed_names(term.name, term.modifier)
        exact = sum(self.stats.share(n) for n in names)
        neighbours = set().union(*(colour_mod.NEIGHBOURS[n] for n in names)) - set(names)
        if self.settings.colour.black_supports_only_dark_neutrals and not set(names) & colour_mod.ACHROMATIC:
            # Black pixels are any colour's unlit side: they never speak *for* a colour with hue.
            neighbours.discard("black")
        support = min(1.0, exact + 0.5 * sum(self.stats.share(n) for n in neighbours))
        return exact, support, names

    def colour_found(self, term: ColourTerm) -> tuple[bool, float]:
        """Whether a colour covers enough of the object to count as a part of it, and its named share."""
        p = self.settings.colour
        exact, _, _ = self.claim_shares(term)
        pixels_per_share = float(self.region.interior.sum()) / max(self.region.scale**2, 1e-9)
        return exact >= p.present_share and exact * pixels_per_share >= p.present_min_pixels, exact

    def can_show_absence(self, info: PhraseInfo, min_pixels: float) -> bool:
        """Whether this view can show that a claimed colour is missing: a solid view of at least
        ``min_pixels`` camera pixels, and a part that is not see-through (its pane looks like the background
        behind it, so the mask drops it)."""
        return not part_is_see_through(info) and self.region.source_pixels >= min_pixels and self.solid()

    def unnamed_hued(self, missing: Sequence[tuple[ColourTerm, float]]) -> list[ColourTerm]:
        """The missing colours that have a hue and whose name covers at most ``colour.absent_max_share`` of
        the object: every object has shadows and highlights, so a neutral colour is never clearly absent."""
        return [
            term
            for term, exact in missing
            if exact <= self.settings.colour.absent_max_share
            and not set(claimed_names(term.name, term.modifier)) & colour_mod.ACHROMATIC
        ]

    def absent_colour(
        self, info: PhraseInfo, missing: Sequence[tuple[ColourTerm, float]], min_pixels: float
    ) -> ColourTerm | None:
        """The claimed colour (of a part or a pattern) that is missing from this whole view, when that
        contradicts the claim.

        Callers ask only for what every side of the object shows (a brim, laces, stripes over the whole
        body). Judged on a solid view of at least ``min_pixels`` camera pixels, so that it would cover a few
        of them; and only when no pixel could be that colour under shade or a cast (the lighting-tolerant
        ``compatible`` share), not merely when the nearest colour names differ.
        """
        p = self.settings.colour
        if not self.can_show_absence(info, min_pixels):
            return None
        for term in self.unnamed_hued(missing):
            names = claimed_names(term.name, term.modifier)
            if self.evidence(names, p.absent_hue_tolerance_deg).compatible <= p.absent_max_compatible:
                return term
        return None

    def clear_structures(
        self,
        geometry: StructureSettings,
        exclude: set[str] | frozenset[str] = frozenset(),
        kinds: tuple[str, ...] = ("dots", "stripes", "checks"),
    ) -> list[tuple[str, float, str, int]]:
        """(kind, score, colour, pieces) of the strongest of ``kinds`` each main colour of the object forms
        (colours covering at least 10 % of it, other than ``exclude``), strongest first."""
        found = []
        for name, share in self.stats.ranked(4):
            if name in exclude or share < 0.1:
                continue
            finding = find_structures(
                self.region.labels == colour_mod.colour_index(name), self.region.interior, geometry
            )
            kind, score = max(((k, s) for k, s in finding.scores.items() if k in kinds), key=lambda ks: ks[1])
            found.append((kind, score, name, finding.pieces))
        return sorted(found, key=lambda row: -row[1])


@dataclass
class Scene:
    """What a gate (a judgement of the whole object) can look at; later stages fill in more of it.

    ``box`` stage: the view and the frame size; ``region`` stage: also the object region; ``palette`` stage:
    also the shared analysis of its colours.
    """

    view: ViewInput
    image_hw: tuple[int, int] | None
    settings: ClassicalSettings
    region: ObjectRegion | None = None
    analysis: ViewAnalysis | None = field(default=None)


__all__ = ["Claim", "ColourEvidenceSettings", "Scene", "ViewAnalysis", "solid_view"]
