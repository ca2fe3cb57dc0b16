"""The ``verifier`` node's ``/diagnostics`` status: what an operator's monitor shows about a running verifier.

Why one function of its own: the status gathers its values from every part of the node (the lifecycle state,
the backends the factory built, the request counters, the camera calibration, the move client, the detections
input) and turns them into one message; keeping that here leaves the node with wiring only.
"""

from __future__ import annotations

from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from .agent.factory import AgentFactory
from .camera_model import PinholeCamera
from .detections_input import DetectionsInput
from .service_stats import ServiceStats


def verifier_diagnostics(
    *,
    active: bool,
    factory: AgentFactory,
    stats: ServiceStats,
    camera: PinholeCamera | None,
    move_client_renewals: int,
    detections: DetectionsInput | None,
    stamp: Any,
) -> DiagnosticArray:
    """One ``verifier: agent`` status: WARN when the counters saw trouble, else OK; stamped ``stamp``."""
    troubles, summary, counted = stats.diagnostics()
    values = [
        ("lifecycle_state", "active" if active else "inactive"),
        *factory.diagnostic_values(),
        *counted,
        # Where pixels become metres (the classical size cue): the camera's calibration, else the parameter.
        ("camera", camera.describe() if camera else "no camera_info"),
        # Moves whose goal the move server never answered and that went on with a fresh client.
        ("move_client_renewals", str(move_client_renewals)),
    ]
    if detections is not None:
        values += detections.diagnostic_values()
    status = DiagnosticStatus(
        level=DiagnosticStatus.WARN if troubles else DiagnosticStatus.OK,
        name="verifier: agent",
        message=summary,
        hardware_id="verifier",
        values=[KeyValue(key=key, value=value) for key, value in values],
    )
    array = DiagnosticArray(status=[status])
    array.header.stamp = stamp
    return array
