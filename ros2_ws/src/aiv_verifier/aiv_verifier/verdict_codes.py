"""The numeric codes of the verifier's messages, and their meaning, without importing any message.

``aiv_interfaces`` declares these codes as message constants (Verdict.DECISION_*, StepReport.ACTION_*,
AttributeState.STATE_*). The evaluator turns a Verdict back into a results record, and the in-process
evaluation builds the same record without ROS: both need the codes' meaning, and only the ROS side may load
message modules. So the values are written down here as plain integers; :mod:`.ros_messages` builds its
messages from them, and a test checks that they equal the constants generated from the .msg files.

The readers below (:func:`model_calls_from_timings`) take any object with the message's field names, so a
Verdict and its plain stand-ins read alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .core.types import AttributeState, Decision

#: Verdict.decision (also StepReport.belief, Verdict.first_view_decision, Verdict.step_predictions).
DECISION_NO = 0
DECISION_YES = 1
DECISION_UNDECIDED = 2
DECISION_FAILED = 3

#: StepReport.action.
ACTION_MOVE = 0
ACTION_DECIDE = 1

#: AttributeState.state / reconciled_state.
STATE_MISSING = 0
STATE_MATCHED = 1
STATE_CONTRADICTED = 2

STATE_CODES = {
    AttributeState.MISSING: STATE_MISSING,
    AttributeState.MATCHED: STATE_MATCHED,
    AttributeState.CONTRADICTED: STATE_CONTRADICTED,
}
STATES_BY_CODE = {code: state for state, code in STATE_CODES.items()}
DECISION_CODES = {Decision.NO: DECISION_NO, Decision.YES: DECISION_YES}

#: Prefix of the zero-time StageTiming entries that carry a backend's call count (``calls:<backend>``).
CALLS_STAGE_PREFIX = "calls:"


def decision_code(decision: Decision | None) -> int:
    """Verdict code of a decision; Unsure maps to UNDECIDED, None (no answer) to FAILED."""
    if decision is None:
        return DECISION_FAILED
    return DECISION_CODES.get(decision, DECISION_UNDECIDED)


def decision_from_code(code: int) -> Decision | None:
    """Inverse of :func:`decision_code`: FAILED gives None, UNDECIDED gives Unsure."""
    if code == DECISION_YES:
        return Decision.YES
    if code == DECISION_NO:
        return Decision.NO
    if code == DECISION_UNDECIDED:
        return Decision.UNSURE
    return None


def model_calls_from_timings(timings: Iterable[Any]) -> dict[str, int]:
    """Backend call counts out of a Verdict's timings (entries with ``stage`` and ``calls``)."""
    return {
        item.stage.split(":", 1)[1]: int(item.calls)
        for item in timings
        if item.stage.startswith(CALLS_STAGE_PREFIX)
    }
