"""Build QoS profiles from plain parameter values, with errors that name the bad parameter.

Every topic's QoS in the AIV nodes is a node parameter (so a robot integrator can match a camera
driver that publishes best-effort, or make a late-joining tool see the current frame), and this is
the one place that turns those strings into :class:`rclpy.qos.QoSProfile`.
"""

from __future__ import annotations

from dataclasses import dataclass

RELIABILITY = ("reliable", "best_effort")
DURABILITY = ("volatile", "transient_local")
HISTORY = ("keep_last", "keep_all")


class QoSParameterError(ValueError):
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
                raise QoSParameterError(f"{where}.{field} = {value!r}; expected one of {', '.join(allowed)}")
        if self.history == "keep_last" and self.depth < 1:
            raise QoSParameterError(f"{where}.depth = {self.depth}; keep_last needs depth >= 1")
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


# Per-pose camera frames: a late subscriber (a verifier started after the simulator) still gets the
# current view, and there is only ever one relevant frame.
LATCHED_FRAME = QoSSettings(
    reliability="reliable", durability="transient_local", history="keep_last", depth=1
)


def declare_qos_parameters(node, prefix: str, default: QoSSettings):
    """Declare ``{prefix}.reliability/durability/history/depth`` on ``node`` and return the profile."""
    values = {
        name: node.declare_parameter(f"{prefix}.{name}", getattr(default, name)).value
        for name in ("reliability", "durability", "history", "depth")
    }
    return QoSSettings(**values).to_profile(where=prefix)
