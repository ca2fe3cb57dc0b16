"""Build QoS profiles from plain parameter values, with errors that name the bad parameter.

Every topic's QoS in the AIV nodes is a node parameter (so a robot integrator can match a camera
driver that publishes best-effort, or make a late-joining tool see the current frame), and this is
the one place that turns those strings into :class:`rclpy.qos.QoSProfile`. The parameters are
described by :func:`qos_parameter_specs` (choices listed), so a node declares them with descriptors
and ``aiv-eval`` checks them like every other parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .parameter_spec import ParameterError, ParameterSpec

RELIABILITY = ("reliable", "best_effort")
DURABILITY = ("volatile", "transient_local")
HISTORY = ("keep_last", "keep_all")
#: The parameters under one QoS prefix, in declaration order.
QOS_FIELDS = ("reliability", "durability", "history", "depth")


class QoSParameterError(ParameterError):
    """A QoS parameter has a value outside its allowed set."""


@dataclass(frozen=True)
class QoSSettings:
    """QoS of one topic as it appears in a params YAML."""

    reliability: str = "reliable"
    durability: str = "volatile"
    history: str = "keep_last"
    depth: int = 10

    def validated(self, where: str) -> QoSSettings:
        """Return self if every field is allowed, else raise naming ``where`` (e.g. the parameter)."""
        for field, allowed in (
            ("reliability", RELIABILITY),
            ("durability", DURABILITY),
            ("history", HISTORY),
        ):
            value = getattr(self, field)
            if value not in allowed:
                raise QoSParameterError(
                    f"parameter '{where}.{field}' = {value!r}; expected one of {', '.join(allowed)}"
                )
        if self.history == "keep_last" and self.depth < 1:
            raise QoSParameterError(f"parameter '{where}.depth' = {self.depth}; keep_last needs depth >= 1")
        return self

    def to_profile(self, where: str = "qos"):
        """The rclpy QoSProfile for these settings (imports rclpy lazily)."""
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

        self.validated(where)
        return QoSProfile(
            reliability=ReliabilityPolicy.RELIABLE
            if self.reliability == "reliable"
            else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL
            if self.durability == "transient_local"
            else DurabilityPolicy.VOLATILE,
            history=HistoryPolicy.KEEP_LAST if self.history == "keep_last" else HistoryPolicy.KEEP_ALL,
            depth=max(1, int(self.depth)),
        )


#: One current message, reliable and latched: a node that subscribes later still receives the one that holds.
LATCHED_CURRENT = QoSSettings(
    reliability="reliable", durability="transient_local", history="keep_last", depth=1
)
# Per-pose camera frames: a late subscriber (a verifier started after the simulator) still gets the
# current view, and there is only ever one relevant frame.
LATCHED_FRAME = LATCHED_CURRENT
#: The detection query topic: the verifier publishes the phrase it wants boxes for, a detector node started
#: later still gets the current one. Publisher and subscriber live in different nodes, so the QoS lives here.
DETECTION_QUERY_QOS = LATCHED_CURRENT
#: The verification request topic (``verifier/requests``): the verifier publishes the request it serves; the
#: robot adapter, a session recorder and the evaluator's pair supervisor, joining late, still see it.
VERIFY_REQUEST_QOS = LATCHED_CURRENT


def qos_parameter_specs(prefix: str, default: QoSSettings) -> tuple[ParameterSpec, ...]:
    """``{prefix}.reliability/durability/history/depth`` as parameter specs, choices listed."""
    return (
        ParameterSpec(
            f"{prefix}.reliability",
            default.reliability,
            "reliable: every message arrives; best_effort: match a sensor driver that publishes best-effort",
            choices=RELIABILITY,
        ),
        ParameterSpec(
            f"{prefix}.durability",
            default.durability,
            "transient_local: a late subscriber still receives the last message(s); volatile: only new ones",
            choices=DURABILITY,
        ),
        ParameterSpec(
            f"{prefix}.history",
            default.history,
            "keep_last keeps `depth` messages per topic; keep_all keeps every unsent message",
            choices=HISTORY,
        ),
        ParameterSpec(
            f"{prefix}.depth",
            default.depth,
            "queue depth for keep_last (at least 1 there)",
            minimum=0,
        ),
    )


def qos_settings_from(values: Mapping[str, Any], prefix: str) -> QoSSettings:
    """The validated settings held under ``{prefix}.*`` in a node's parameter values."""
    return QoSSettings(**{name: values[f"{prefix}.{name}"] for name in QOS_FIELDS}).validated(prefix)


def declare_qos_parameters(node, prefix: str, default: QoSSettings):
    """Declare ``{prefix}.*`` on ``node`` (with descriptors) and return the profile.

    For a node that declares nothing else through :mod:`aiv_common.parameters`; a node with a parameter
    table puts :func:`qos_parameter_specs` into it instead, so unknown keys are refused for the whole node.
    """
    from .parameters import declare_specs

    values = declare_specs(node, qos_parameter_specs(prefix, default))
    return qos_settings_from(values, prefix).to_profile(where=prefix)
