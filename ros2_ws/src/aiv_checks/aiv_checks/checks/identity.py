"""Identity (palette gate): can the object be the described one, given the colours it shows?

The descriptions name the object's colours (body, parts, print, logos). When a clear share of the object is
coloured in hues that none of them names, the object is another one, whatever each single attribute says,
and every attribute is No (a same-category distractor's differing strap or trim is often all that shows).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiv_common.setting_fields import setting

from ..view import Scene


@dataclass(frozen=True)
class IdentitySettings:
    """When the object's palette rules it out."""

    unexplained_share: float = setting(
        0.04,
        "every attribute is No when at least this share of the object is clearly coloured in hues no "
        "description names; 0 = off",
        minimum=0.0,
        maximum=1.0,
    )
    min_pixels: float = setting(
        800.0,
        "objects smaller than this many camera pixels are not judged (the mask's edge, where background "
        "leaks in, is too large a share of them)",
        minimum=0.0,
    )


def gate(scene: Scene) -> str:
    """Reason the object cannot be the described one by its palette ("" when it may be).

    Off when ``unexplained_share`` is 0, without descriptions to compare with, for a see-through frame (its
    region shows the room), on a view that is not solid, and for small objects.
    """
    analysis = scene.analysis
    if analysis is None:
        return ""
    p = scene.settings.identity
    region = analysis.region
    if p.unexplained_share <= 0 or not analysis.descriptions or analysis.open_frame:
        return ""
    if not analysis.solid():
        return ""
    if region.source_pixels < p.min_pixels:
        return ""  # small objects: the boundary band (background) is a large share of the mask
    share = analysis.unexplained_share()
    if share < p.unexplained_share:
        return ""
    return (
        f"{share:.0%} of the object is coloured in hues the descriptions never name "
        f"(named: {', '.join(sorted(analysis.mentioned)) or 'none'}): not the described object"
    )


__all__ = ["IdentitySettings", "gate"]
