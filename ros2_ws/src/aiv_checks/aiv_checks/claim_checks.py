"""Which check judges which single claim: the table the registry and the whole-description check both read.

A description is judged clause by clause by the same checks as single claims, so this table sits below both
:mod:`aiv_checks.registry` (which adds the description check itself, and the gates) and
:mod:`aiv_checks.checks.description`: the table is written once, and neither of the two imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

from .checks import logo, main_colour, part_colour, pattern, plain, text
from .outcome import CheckOutcome
from .view import Claim, ViewAnalysis

Check = Callable[[Claim, ViewAnalysis], CheckOutcome]

#: Claim kind -> the check that judges it (every kind but the whole description).
CLAIM_CHECKS: MappingProxyType[str, Check] = MappingProxyType(
    {
        "main_colour": main_colour.check,
        "part_colour": part_colour.check,
        "pattern": pattern.check,
        "no_pattern": plain.check,
        "text": text.check,
        "logo": logo.check,
    }
)

__all__ = ["CLAIM_CHECKS", "Check"]
