"""Session bags: what the verifier saw and did, as a rosbag2 file (mcap by default, sqlite3 on request).

Topic convention (each name is what the recorder subscribed to, stored in the bag's ``custom_data`` under
``aiv_session.topic.<role>`` so that replay finds renamed topics without being told):

==============  ============================  ===========================================  ================
role            default topic                 type                                         published by
==============  ============================  ===========================================  ================
image           /camera/image_raw             sensor_msgs/msg/Image                        simulator/camera
camera_info     /camera/camera_info           sensor_msgs/msg/CameraInfo                   simulator/camera
ground_truth    /sim/ground_truth_view        aiv_interfaces/msg/GroundTruthView           simulator
detections      /detections                   aiv_interfaces/msg/Detection2DArray          a detector
requests        /verifier/requests            aiv_interfaces/action/VerifyInstance_Goal    verifier
steps           /verifier/steps               aiv_interfaces/msg/StepReport                verifier
verdicts        /verifier/verdict             aiv_interfaces/msg/Verdict                   verifier
==============  ============================  ===========================================  ================

Action goals and results are not topics, so the verifier publishes each accepted VerifyInstance goal (with
its effective request id) on ``requests`` and every step (move request, outcome, frame stamp, answers) on
``steps``; the Verdict's transcript repeats the steps of the whole episode.

The project's own message definitions are registered in the rosbags typestore from the ``.msg``/``.action``
files the interface package installs (found through the ament index), so the writer embeds their full text
(nested types included) in the bag: mcap schema records, sqlite3 ``message_definitions``. Any reader that
honours those (rosbags, ``mcap`` + ``mcap-ros2-support``) decodes them without this workspace. The reader
relies on them too: a bag recorded before a project message changed is decoded with the definition it stores
(:mod:`.message_upgrade`).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from rosbags.rosbag2 import StoragePlugin
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

INTERFACE_PACKAGE = "aiv_interfaces"
GOAL_TYPE = "aiv_interfaces/action/VerifyInstance_Goal"


@dataclass(frozen=True)
class TopicRole:
    role: str
    topic: str
    msgtype: str
    #: Published reliable + transient-local (latched): the recorder subscribes the same way, so it also gets
    #: the message that was published before it joined.
    latched: bool


ROLES: tuple[TopicRole, ...] = (
    TopicRole("image", "/camera/image_raw", "sensor_msgs/msg/Image", True),
    TopicRole("camera_info", "/camera/camera_info", "sensor_msgs/msg/CameraInfo", True),
    TopicRole("ground_truth", "/sim/ground_truth_view", "aiv_interfaces/msg/GroundTruthView", True),
    TopicRole("detections", "/detections", "aiv_interfaces/msg/Detection2DArray", False),
    TopicRole("requests", "/verifier/requests", GOAL_TYPE, True),
    TopicRole("steps", "/verifier/steps", "aiv_interfaces/msg/StepReport", False),
    TopicRole("verdicts", "/verifier/verdict", "aiv_interfaces/msg/Verdict", False),
)
ROLES_BY_NAME: Mapping[str, TopicRole] = {role.role: role for role in ROLES}
#: Roles whose messages start with a std_msgs/Header: their header stamps must strictly increase.
STAMPED_FRAME_ROLES = ("image", "camera_info", "ground_truth", "detections")

#: custom_data keys.
TOPIC_KEY_PREFIX = "aiv_session.topic."
FORMAT_KEY = "aiv_session.format"
FORMAT_VERSION = "1"
VERIFIER_PARAMS_KEY = "aiv_session.verifier_parameters"

STORAGES: Mapping[str, StoragePlugin] = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


class SessionBagError(ValueError):
    """A session bag cannot be used; the message names the bag, the topic when there is one, and the problem."""


def header_stamp_ns(raw: bytes | memoryview) -> int:
    """The header stamp of a serialized message that starts with a std_msgs/Header, without decoding it.

    CDR: a 4-byte encapsulation header (byte 1 odd: little endian), then ``int32 sec``, ``uint32 nanosec``.
    """
    if len(raw) < 12:
        raise ValueError(f"a serialized message of {len(raw)} bytes has no header stamp")
    order = "<" if raw[1] & 1 else ">"
    sec, nanosec = struct.unpack_from(f"{order}iI", raw, 4)
    return int(sec) * 1_000_000_000 + int(nanosec)


# -- message definitions ----------------------------------------------------------------------------------


def interface_share_dir() -> Path:
    """``share/aiv_interfaces`` of the installed interface package (ament index, else AMENT_PREFIX_PATH)."""
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(INTERFACE_PACKAGE))
    except (ImportError, LookupError, ValueError):
        pass
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        candidate = Path(prefix) / "share" / INTERFACE_PACKAGE
        if (candidate / "msg").is_dir():
            return candidate
    raise SessionBagError(
        f"the {INTERFACE_PACKAGE} message definitions were not found (no share/{INTERFACE_PACKAGE}/msg in the "
        "ament index or AMENT_PREFIX_PATH); source the workspace's install/setup.bash"
    )


def action_parts(text: str) -> tuple[str, str, str]:
    """Goal, result and feedback sections of a ``.action`` file."""
    parts: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip() == "---":
            parts.append([])
        else:
            parts[-1].append(line)
    if len(parts) != 3:
        raise ValueError(f"an action definition has {len(parts)} sections, expected 3")
    goal, result, feedback = ("\n".join(lines) + "\n" for lines in parts)
    return goal, result, feedback


def project_type_definitions(share: Path | None = None) -> dict[str, str]:
    """Type name → message definition text of every project message a session bag may hold."""
    share = share or interface_share_dir()
    definitions = {
        f"{INTERFACE_PACKAGE}/msg/{path.stem}": path.read_text(encoding="utf-8")
        for path in sorted((share / "msg").glob("*.msg"))
    }
    action = share / "action" / "VerifyInstance.action"
    if not action.is_file():
        raise SessionBagError(f"{action} is missing: the {INTERFACE_PACKAGE} install is incomplete")
    definitions[GOAL_TYPE] = action_parts(action.read_text(encoding="utf-8"))[0]
    return definitions


_TYPESTORE: Typestore | None = None


def session_typestore() -> Typestore:
    """ROS 2 Kilted's standard types plus the project's own, built once."""
    global _TYPESTORE
    if _TYPESTORE is None:
        store = get_typestore(Stores.ROS2_KILTED)
        types = {}
        for name, text in project_type_definitions().items():
            types.update(get_types_from_msg(text, name))
        store.register(types)
        _TYPESTORE = store
    return _TYPESTORE


def iter_roles(topics: Mapping[str, str] | None = None) -> Iterator[tuple[TopicRole, str]]:
    """Each role with the topic name to use (``topics`` overrides the defaults by role)."""
    for role in ROLES:
        yield role, (topics or {}).get(role.role, role.topic)
