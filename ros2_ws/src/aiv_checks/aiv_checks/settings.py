"""The weight-free verifier's settings: a few that concern every check, then one section per check.

Each section is the settings dataclass of one check, declared in that check's module beside the code that
reads it; this module only puts them together. As node parameters they are ``verifier.classical.<field>``
and ``verifier.classical.<section>.<field>`` (``verifier.classical.main_colour.yes_share``). How the values
were chosen is in ``TUNING.md`` beside this package.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiv_common.setting_fields import section, setting

from .checks.category import CategorySettings
from .checks.description import DescriptionSettings
from .checks.identity import IdentitySettings
from .checks.logo import LogoSettings
from .checks.main_colour import MainColourSettings
from .checks.part_colour import PartColourSettings
from .checks.pattern import PatternSettings
from .checks.plain import PlainSettings
from .checks.text import TextSettings
from .measure.ocr import ENGINE_CHOICES
from .measure.region import RegionSettings
from .view import ColourEvidenceSettings


@dataclass(frozen=True)
class ClassicalSettings:
    """Everything the weight-free verifier can be told (shares are fractions of the object's pixels)."""

    ocr_engine: str = setting(
        "auto",
        "OCR engine for printed text: auto (rapidocr, else tesseract, else none), rapidocr, tesseract or "
        "none; chosen when the verifier is built, loaded when a claim first needs text",
        choices=ENGINE_CHOICES,
    )
    min_object_pixels: float = setting(
        40.0,
        "an object covering fewer camera pixels than this is a smudge: every answer is Unsure",
        minimum=0.0,
    )
    decisive_min_box_px: float = setting(
        24.0,
        "a No that rests on the object's colours or silhouette needs a box at least this many camera pixels "
        "on its short side (thin, edge-on views mix object and background)",
        minimum=0.0,
    )
    open_frame_palette_unreliable: bool = setting(
        True,
        "for a see-through category (glasses) no No rests on which colours fill the region, which shows the "
        "room through the lenses; a colour no pixel could be is still a No",
    )
    region: RegionSettings = section(
        RegionSettings, "separating the object from its surroundings in the crop"
    )
    colour: ColourEvidenceSettings = section(
        ColourEvidenceSettings, "when a colour counts as present on the object or missing from the view"
    )
    main_colour: MainColourSettings = section(MainColourSettings, "the object's own colour")
    part_colour: PartColourSettings = section(PartColourSettings, "the colour of a part")
    pattern: PatternSettings = section(PatternSettings, "printed patterns")
    plain: PlainSettings = section(PlainSettings, '"no pattern" claims')
    text: TextSettings = section(TextSettings, "printed text read by OCR")
    logo: LogoSettings = section(LogoSettings, "logos and marks")
    description: DescriptionSettings = section(
        DescriptionSettings, "whole descriptions (direct and merged modes)"
    )
    identity: IdentitySettings = section(IdentitySettings, "the palette gate: colours no description names")
    category: CategorySettings = section(CategorySettings, "the category gate: size, silhouette and outline")


__all__ = ["ClassicalSettings"]
