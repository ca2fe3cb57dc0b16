"""The one translation between the benchmark's move outcomes and MoveToSector's integer result codes.

On the wire a move outcome is an integer constant of ``MoveToSector.Result`` (the action file is the
interface); everywhere else it is :class:`aiv_dataset.vocabulary.MoveOutcome`. The simulator node writes
codes and the verifier reads them, so both use this table: a new outcome is added in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from aiv_dataset.vocabulary import MoveOutcome
from aiv_interfaces.action import MoveToSector

#: Result code of every outcome a move server can report. ``DECIDED`` has none: deciding is not a move.
OUTCOME_CODES: Mapping[MoveOutcome, int] = MappingProxyType(
    {
        MoveOutcome.MOVED: MoveToSector.Result.OUTCOME_MOVED,
        MoveOutcome.STAYED: MoveToSector.Result.OUTCOME_STAYED,
        MoveOutcome.UNREACHABLE: MoveToSector.Result.OUTCOME_UNREACHABLE,
        MoveOutcome.ALREADY_VISITED: MoveToSector.Result.OUTCOME_ALREADY_VISITED,
        MoveOutcome.REJECTED: MoveToSector.Result.OUTCOME_REJECTED,
    }
)
OUTCOMES_BY_CODE: Mapping[int, MoveOutcome] = MappingProxyType(
    {code: outcome for outcome, code in OUTCOME_CODES.items()}
)


def outcome_code(outcome: MoveOutcome) -> int:
    """The result code of ``outcome``; ValueError for ``DECIDED``, which no move server reports."""
    try:
        return OUTCOME_CODES[outcome]
    except KeyError:
        raise ValueError(f"move outcome {outcome.value!r} has no MoveToSector result code") from None


def outcome_from_code(code: int) -> MoveOutcome:
    """The outcome a result code names. A code this build does not know counts as ``REJECTED``: the
    client cannot tell what the server did, so it must not assume the camera moved."""
    return OUTCOMES_BY_CODE.get(int(code), MoveOutcome.REJECTED)
