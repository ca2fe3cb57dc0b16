"""The plain codes of :mod:`aiv_verifier.verdict_codes` are the constants generated from the .msg files.

The in-process evaluation reads decisions, actions and attribute states with the plain copies (it must load no
message module); if a .msg file renumbered a constant, the ROS records and the in-process records would drift
apart silently. This pins them to each other, and reads a real Verdict back through the plain readers.
"""

from __future__ import annotations

from aiv_interfaces.msg import AttributeState, StageTiming, StepReport, Verdict
from aiv_verifier import verdict_codes
from aiv_verifier.core.types import AttributeState as State
from aiv_verifier.core.types import Decision


def _constants(message: type, prefix: str) -> dict[str, int]:
    return {name: getattr(message, name) for name in dir(message) if name.startswith(prefix)}


def test_every_message_constant_has_its_plain_copy_with_the_same_value() -> None:
    generated = {
        **_constants(Verdict, "DECISION_"),
        **_constants(StepReport, "ACTION_"),
        **_constants(AttributeState, "STATE_"),
    }
    assert len(generated) == 9
    assert {name: getattr(verdict_codes, name, None) for name in generated} == generated


def test_codes_read_back_from_real_messages() -> None:
    for decision in (Decision.YES, Decision.NO, Decision.UNSURE, None):
        message = Verdict(decision=verdict_codes.decision_code(decision))
        assert verdict_codes.decision_from_code(message.decision) is decision
    for state in State:
        message = AttributeState(state=verdict_codes.STATE_CODES[state])
        assert verdict_codes.STATES_BY_CODE[message.state] is state
    timings = [
        StageTiming(stage="verify", seconds=1.5, calls=4),
        StageTiming(stage="calls:verifier", seconds=0.0, calls=3),
        StageTiming(stage="calls:language_model", seconds=0.0, calls=1),
    ]
    assert verdict_codes.model_calls_from_timings(timings) == {"verifier": 3, "language_model": 1}
