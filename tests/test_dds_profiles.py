"""The two Fast DDS profiles and how ``.env.sh`` picks one (``AIV_DDS_PROFILE``).

The several-machine profile must keep everything the one-machine profile gives the nodes (the shared-memory
segment that carries camera frames, the participant lease the evaluator notices dead servers by, the services'
reply wait) and differ only in letting UDP out of loopback; the default stays the one-machine profile. Discovery
across a real link with that profile: tests/ros/test_two_network_stacks.py.
"""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
LOCALHOST = REPO_ROOT / "config" / "fastdds_localhost_shm16mb.xml"
LAN = REPO_ROOT / "config" / "fastdds_lan_shm16mb.xml"
ENV_FILE = REPO_ROOT / ".env.sh"
NS = "{http://www.eprosima.com}"


def _settings(path: Path) -> dict[str, object]:
    """What a profile sets, by transport kind rather than by the ids it gives its transports."""
    root = ElementTree.parse(path).getroot()
    transports = {d.findtext(f"{NS}transport_id"): d for d in root.iter(f"{NS}transport_descriptor")}
    participant = next(root.iter(f"{NS}participant"))
    used = [transports[t.text] for t in participant.iter(f"{NS}transport_id") if t.text in transports]
    service = next(p for p in root.iter(f"{NS}data_writer") if p.get("profile_name") == "service")
    return {
        "default": participant.get("is_default_profile"),
        "transports": sorted(d.findtext(f"{NS}type") or "" for d in used),
        "shm_segment": [d.findtext(f"{NS}segment_size") for d in used if d.findtext(f"{NS}type") == "SHM"],
        "builtin": participant.findtext(f".//{NS}useBuiltinTransports"),
        "lease_s": participant.findtext(f".//{NS}leaseDuration/{NS}sec"),
        "announce_s": participant.findtext(f".//{NS}leaseAnnouncement/{NS}sec"),
        "reply_wait_s": service.findtext(f".//{NS}max_blocking_time/{NS}sec"),
        "udp_interfaces": [
            a.text for d in used if d.findtext(f"{NS}type") == "UDPv4" for a in d.iter(f"{NS}address")
        ],
    }


def test_the_lan_profile_keeps_the_localhost_profile_and_lets_udp_out() -> None:
    local, lan = _settings(LOCALHOST), _settings(LAN)
    assert local["udp_interfaces"] == ["127.0.0.1"]
    assert lan["udp_interfaces"] == []  # every interface
    assert {**lan, "udp_interfaces": None} == {**local, "udp_interfaces": None}
    assert lan["shm_segment"] == ["16777216"] and lan["lease_s"] == "4" and lan["reply_wait_s"] == "2"


def _sourced(*, profile: str | None = None, before: str = "") -> subprocess.CompletedProcess[str]:
    env = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin"}
    if profile is not None:
        env["AIV_DDS_PROFILE"] = profile
    script = f'{before} source "{ENV_FILE}"; status=$?; echo "$status|$FASTDDS_DEFAULT_PROFILES_FILE|' \
             '$ROS_AUTOMATIC_DISCOVERY_RANGE"'  # fmt: skip
    return subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.skipif(not ENV_FILE.is_file(), reason=".env.sh is not generated yet (run scripts/bootstrap.sh)")
def test_env_file_selects_the_profile_and_the_discovery_range() -> None:
    default = _sourced()
    assert default.stdout.strip() == f"0|{LOCALHOST}|LOCALHOST", default.stderr
    lan = _sourced(profile="lan")
    assert lan.stdout.strip() == f"0|{LAN}|SUBNET", lan.stderr
    assert not lan.stderr.strip()
    kept = _sourced(
        profile="lan", before="export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_STATIC_PEERS=10.0.0.2;"
    )
    assert kept.stdout.strip() == f"0|{LAN}|LOCALHOST", kept.stderr  # a range set before sourcing is kept
    # A shell that sourced the default first keeps LOCALHOST: said in one line, not silently useless.
    again = _sourced(profile="lan", before="AIV_DDS_PROFILE= source .env.sh;")
    assert "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and no ROS_STATIC_PEERS" in again.stderr
    wrong = _sourced(profile="lab")
    assert wrong.stdout.startswith("2|"), wrong.stdout
    assert wrong.stderr.strip().splitlines() == [
        f"{ENV_FILE}: AIV_DDS_PROFILE='lab' is no profile; expected localhost or lan"
    ]
