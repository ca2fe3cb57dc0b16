"""What every model test runs under: no network and a single-threaded torch.

The model hub is unreachable on the machines that run these tests, and the product must never try it: the
fixture :func:`no_network` disables the hub in the environment and makes any socket connection to a
non-loopback address raise, so a code path that tries to download fails the test loudly instead of hanging or
passing because a cache happened to exist. Loopback stays open for the OpenAI-compatible test server.

Torch is limited to one thread per test process: CI runs two pytest workers on two cores, and torch's default
of one thread per core would oversubscribe them.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator

import pytest


class NetworkAccessError(RuntimeError):
    """A test's code tried to reach a machine other than this one."""


def _is_loopback(address: object) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False  # a host name other than localhost would need DNS: refused


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Hub disabled, every non-loopback connection refused, for the duration of one test."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
        monkeypatch.setenv(name, "1")
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: object) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise NetworkAccessError(f"test tried to connect to {address!r}")
        real_connect(self, address)  # type: ignore[arg-type]

    def guarded_connect_ex(self: socket.socket, address: object) -> int:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise NetworkAccessError(f"test tried to connect to {address!r}")
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    def refuse_lookup(host: object, *args: object, **kwargs: object) -> object:
        if not _is_loopback(host):
            raise NetworkAccessError(f"test tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", refuse_lookup)
    yield


def limit_torch_threads() -> None:
    """One intra-op thread per test process (call before the first forward)."""
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def shared_model_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> tuple[str, str]:
    """``(directory, lock file)`` shared by all xdist workers of one run, so a session fixture that builds or
    trains a tiny model does it once per run instead of once per worker (hold the lock while building)."""
    root = tmp_path_factory.getbasetemp().parent  # the run's directory, common to every worker
    return os.path.join(root, f"models-{name}"), os.path.join(root, f"models-{name}.lock")
