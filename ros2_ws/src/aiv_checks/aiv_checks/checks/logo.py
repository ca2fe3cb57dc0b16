"""Logo: does the object carry a mark of the claimed colour (and shape) ("a red star logo")?

A logo is found as a compact patch of the claimed colour enclosed by the object; when it is large enough its
outline names a shape. Not finding one is no No: a logo sits on one side.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiv_common.setting_fields import setting
from aiv_verifier.core.types import Decision

from ..measure.colour import claimed_names
from ..measure.marks import find_logo
from ..outcome import CheckOutcome, unsure
from ..view import Claim, ViewAnalysis


@dataclass(frozen=True)
class LogoSettings:
    """How large a mark may be, and what counts as the logo."""

    min_fraction: float = setting(
        0.002, "smallest share of the object a logo mark covers", minimum=0.0, maximum=1.0
    )
    max_fraction: float = setting(
        0.15, "largest share of the object a logo mark covers", minimum=0.0, maximum=1.0
    )
    yes_without_shape: bool = setting(
        True, "a mark of the claimed colour too small to name its shape still counts as the logo"
    )


def check(claim: Claim, analysis: ViewAnalysis) -> CheckOutcome:
    info = claim.info
    p = analysis.settings.logo
    if not info.colours:
        return unsure("logo without a colour: cannot be located by colour")
    term = info.colours[0]
    names = claimed_names(term.name, term.modifier)
    finding = find_logo(analysis.region, names, info.logo_shape, p.min_fraction, p.max_fraction)
    what = f"{term.describe()} {info.logo_shape or 'logo'}".strip()
    if finding is None:
        return unsure(f"no {term.describe()} mark on the visible side")
    if info.logo_shape and finding.shape:
        if finding.shape == info.logo_shape or (finding.shape, info.logo_shape) in (
            ("square", "diamond"),
            ("diamond", "square"),
        ):
            return CheckOutcome(Decision.YES, f"{what} mark found ({finding.pixels:.0f} px)", 0.7)
        return unsure(f"a {term.describe()} mark is there but looks like a {finding.shape}")
    if p.yes_without_shape:
        return CheckOutcome(
            Decision.YES, f"a small {term.describe()} mark found (too small to check its shape)", 0.4
        )
    return unsure(f"a {term.describe()} mark is there but too small to check its shape")


__all__ = ["LogoSettings", "check"]
