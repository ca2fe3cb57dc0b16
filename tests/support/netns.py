"""Two "machines" on one host: two network namespaces joined by a veth pair, for DDS tests across a real link.

A test that claims nodes find each other across machines must not let them meet on loopback, so each side gets
a network namespace of its own with only its loopback and one end of a veth pair (``10.77.0.1/24`` and
``10.77.0.2/24``): UDP between the sides crosses the veth and stops when it is cut (``ip link set ... down``).
(Namespaces of one host share /dev/shm, so a test that means to exercise the link keeps Fast DDS's SHM transport
out of its profile, see :func:`profile_without_shm`.)

Needs root and iproute2's ``ip netns``; :func:`netns_unavailable` says in one line why not. Namespaces are named
after the creating process (``aiv-<pid>-a``) so that concurrent test processes never meet, and the ones left by a
process that died without cleaning up are removed by the next creator.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

#: The two sides' addresses on the veth link.
ADDRESSES = ("10.77.0.1", "10.77.0.2")
PREFIX_LENGTH = 24
#: How many multicast groups a namespace's sockets may join together (a per-namespace sysctl).
IGMP_MEMBERSHIPS = "/proc/sys/net/ipv4/igmp_max_memberships"
_OWN_NAME = re.compile(r"^aiv-(\d+)-[ab]$")
FASTDDS_NS = "http://www.eprosima.com"


def _ip(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(["ip", *argv], capture_output=True, text=True, timeout=30, check=False)
    if check and completed.returncode != 0:
        raise RuntimeError(f"`ip {' '.join(argv)}` exited {completed.returncode}: {completed.stderr.strip()}")
    return completed


def netns_unavailable() -> str | None:
    """Why two network namespaces cannot be made here (one line), or None when they can."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    if shutil.which("ip") is None:
        return "iproute2's `ip` command is not installed"
    probe = f"aiv-{os.getpid()}-probe"
    added = _ip("netns", "add", probe, check=False)
    if added.returncode != 0:
        return f"`ip netns add` fails here: {added.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


def _remove_stale_namespaces() -> None:
    """Delete namespaces this module made in processes that are gone (killed before their clean-up ran)."""
    listed = _ip("netns", "list", check=False).stdout.split("\n")
    for line in listed:
        name = line.split(" ")[0]
        match = _OWN_NAME.match(name)
        if match and not Path(f"/proc/{match.group(1)}").exists():
            _ip("netns", "del", name, check=False)


class TwoHosts:
    """Namespaces ``a`` and ``b`` joined by a veth pair; :meth:`cut` and :meth:`restore` the link.

    Each side gets a default route out of its veth, as a machine on a LAN has one. With ``multicast=False`` no
    multicast group can be joined on either side (``net.ipv4.igmp_max_memberships=0``), so no multicast datagram
    is received there while unicast between the sides works: a network that drops multicast, as far as DDS
    discovery can tell. The tests that use it check that discovery without peers indeed finds nothing.

    Use as a context manager (or call :meth:`close`): the namespaces, and with them the veth pair, are deleted
    at the end whatever happened in between.
    """

    def __init__(self, *, multicast: bool = True) -> None:
        pid = os.getpid()
        self.multicast = multicast
        self.namespaces = (f"aiv-{pid}-a", f"aiv-{pid}-b")
        self.veths = (f"aiv{pid}a", f"aiv{pid}b")  # interface names: at most 15 characters
        self.addresses = ADDRESSES
        self._created: list[str] = []

    def __enter__(self) -> TwoHosts:
        _remove_stale_namespaces()
        try:
            for namespace in self.namespaces:
                _ip("netns", "add", namespace)
                self._created.append(namespace)
                _ip("-n", namespace, "link", "set", "lo", "up")
            (ns_a, ns_b), (veth_a, veth_b) = self.namespaces, self.veths
            _ip("link", "add", veth_a, "netns", ns_a, "type", "veth", "peer", "name", veth_b, "netns", ns_b)
            for namespace, veth, address in zip(self.namespaces, self.veths, self.addresses, strict=True):
                _ip("-n", namespace, "addr", "add", f"{address}/{PREFIX_LENGTH}", "dev", veth)
                _ip("-n", namespace, "link", "set", veth, "up")
                self._route(namespace, veth)
                if not self.multicast:
                    # No multicast group may be joined, so none is received (the kernel delivers a group's
                    # datagrams only to an interface that joined it).
                    _ip("netns", "exec", namespace, "sh", "-c", f"echo 0 > {IGMP_MEMBERSHIPS}")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete both namespaces (the veth pair goes with them); safe to call twice."""
        while self._created:
            _ip("netns", "del", self._created.pop(), check=False)

    def cut(self) -> None:
        """Take side a's end of the link down: the carrier drops on both ends and nothing crosses."""
        _ip("-n", self.namespaces[0], "link", "set", self.veths[0], "down")

    def restore(self) -> None:
        """Bring side a's end back up, with the route that taking it down removed."""
        _ip("-n", self.namespaces[0], "link", "set", self.veths[0], "up")
        self._route(self.namespaces[0], self.veths[0])

    @staticmethod
    def _route(namespace: str, veth: str) -> None:
        """A default route out of the veth (taking the link down removes it)."""
        _ip("-n", namespace, "route", "replace", "default", "dev", veth)

    def argv(self, side: int, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside side ``side``'s namespace (0 = a, 1 = b)."""
        return ["ip", "netns", "exec", self.namespaces[side], *argv]


class NetnsProcess:
    """A child started inside a namespace, in a session of its own; stopped with SIGINT like Ctrl-C, and
    whatever is left of its process group killed afterwards."""

    def __init__(self, argv: Sequence[str], log_path: Path, env: Mapping[str, str]) -> None:
        self.argv = list(argv)
        self.log_path = log_path
        self._log: IO[bytes] = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        # `ip netns exec` enters the namespace and then execs the command, so this pid is the command's.
        self.process = subprocess.Popen(
            self.argv, stdout=self._log, stderr=subprocess.STDOUT, env=dict(env), start_new_session=True
        )

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait(self, timeout_s: float) -> int | None:
        """The exit code once the child ends by itself, None if it still runs after ``timeout_s``."""
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace_s: float = 20.0) -> int:
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=grace_s)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self._log.close()
        return self.process.wait(timeout=10)


def profile_without_shm(source: Path, target: Path) -> Path:
    """Write ``source`` (a Fast DDS profiles file) to ``target`` without its shared-memory transports.

    Two namespaces of one host share /dev/shm, through which participants with SHM in their profile could talk
    past a cut link; without it, everything between the sides crosses the veth over UDP.
    """
    ElementTree.register_namespace("", FASTDDS_NS)
    tree = ElementTree.parse(source)
    root = tree.getroot()
    tag = f"{{{FASTDDS_NS}}}"
    shm_ids = set()
    for descriptors in root.iter(f"{tag}transport_descriptors"):
        for descriptor in list(descriptors):
            if descriptor.findtext(f"{tag}type") == "SHM":
                shm_ids.add(descriptor.findtext(f"{tag}transport_id"))
                descriptors.remove(descriptor)
    if not shm_ids:
        raise ValueError(f"{source} has no SHM transport to leave out")
    for transports in root.iter(f"{tag}userTransports"):
        for transport in list(transports):
            if transport.text in shm_ids:
                transports.remove(transport)
    tree.write(target, encoding="UTF-8", xml_declaration=True)
    return target
