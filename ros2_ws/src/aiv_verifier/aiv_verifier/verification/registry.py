"""Per-view verifier backends by name: aiv_verifier's own, and those installed packages register.

Nav2 finds its plug-ins through pluginlib; a Python package finds them through entry points. A package that
provides a backend declares it in its ``setup.py`` under the group :data:`ENTRY_POINT_GROUP`::

    entry_points={"aiv_verifier.backends": ["classical = aiv_checks.backend:BACKEND"]}

where ``BACKEND`` is a :class:`~.backend.VerifierBackend`, and a configuration names it (``verifier.backend:
classical``). So aiv_verifier imports no backend package: the weight-free ``classical`` backend (OpenCV and the
OCR runtime, in ``aiv_checks``) is found here by name, like a lab's own. Loading is lazy: listing the names
reads the installed packages' metadata only; a backend's module is imported when its settings or verifier are
first asked for, and only that backend's.

``colcon build`` writes the metadata (``ros2_ws/build/<package>/<package>.egg-info/entry_points.txt``), so a
new or renamed entry point takes a rebuild (``make build``; ``make setup`` rebuilds when a setup.py changed).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from importlib.metadata import EntryPoint, entry_points

from .backend import BackendError, VerifierBackend
from .builtin_backends import BUILTIN_BACKENDS

#: The entry point group backend packages register under.
ENTRY_POINT_GROUP = "aiv_verifier.backends"
#: The backend of a configuration that names none.
DEFAULT_BACKEND = "classical"

#: Backends registered in this process: aiv_verifier's own, then :func:`register_backend`'s.
_REGISTERED: dict[str, VerifierBackend] = dict(BUILTIN_BACKENDS)
#: Installed backends loaded so far, by name.
_LOADED: dict[str, VerifierBackend] = {}
_LOCK = threading.RLock()  # a backend module may register another while it loads


def register_backend(name: str, backend: VerifierBackend) -> None:
    """Make ``backend`` available under ``name`` in this process (a backend defined in a script or a test;
    an installed package registers through its entry point instead). Registering a name twice is an error."""
    with _LOCK:
        if name in _REGISTERED or name in _installed():
            raise BackendError(f"verifier backend {name!r} is already registered")
        _REGISTERED[name] = backend


@functools.cache
def _installed() -> dict[str, tuple[EntryPoint, ...]]:
    """The entry points of :data:`ENTRY_POINT_GROUP`, by name (read once per process)."""
    found: dict[str, tuple[EntryPoint, ...]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found[point.name] = (*found.get(point.name, ()), point)
    return found


def backend_names() -> tuple[str, ...]:
    """Every backend a configuration may name: the default first, then aiv_verifier's own and those
    registered in this process, then the installed ones, by name."""
    names = [*_REGISTERED, *(name for name in sorted(_installed()) if name not in _REGISTERED)]
    if DEFAULT_BACKEND in names:
        names.remove(DEFAULT_BACKEND)
        names.insert(0, DEFAULT_BACKEND)
    return tuple(names)


def _package(point: EntryPoint) -> str:
    return point.dist.name if point.dist is not None else "an unknown package"


def _load(name: str, point: EntryPoint) -> VerifierBackend:
    where = f"verifier backend {name!r} (entry point '{point.value}' of {_package(point)})"
    try:
        backend: VerifierBackend = point.load()
    except Exception as error:  # any failure of the backend's module is reported as this backend's
        raise BackendError(f"{where} does not load: {type(error).__name__}: {error}") from error
    # Checked by shape, not isinstance: a process that re-imports aiv_verifier (a test purging sys.modules)
    # holds a second VerifierBackend class, while the backend's module keeps the first.
    if not all(hasattr(backend, field.name) for field in dataclasses.fields(VerifierBackend)):
        raise BackendError(f"{where} is a {type(backend).__name__}, not a VerifierBackend")
    return backend


def get_backend(name: str) -> VerifierBackend:
    """The backend registered as ``name``; :class:`BackendError` naming those found when there is none."""
    with _LOCK:
        registered = _REGISTERED.get(name)
        points = _installed().get(name, ())
        if registered is not None and points:
            raise BackendError(
                f"verifier backend {name!r} is aiv_verifier's own and also registered by "
                f"{', '.join(_package(point) for point in points)}; rename the latter"
            )
        if registered is not None:
            return registered
        if len(points) > 1:
            raise BackendError(
                f"verifier backend {name!r} is registered by more than one package: "
                f"{', '.join(_package(point) for point in points)}"
            )
        if not points:
            raise BackendError(
                f"unknown verifier.backend {name!r}; found: {', '.join(backend_names()) or 'none'} "
                f"(a package adds one under the entry point group {ENTRY_POINT_GROUP!r}; rebuild after adding it)"
            )
        if name not in _LOADED:
            _LOADED[name] = _load(name, points[0])
        return _LOADED[name]


def is_privileged(name: str) -> bool:
    """Whether the backend ``name`` reads the simulator's ground truth (False for a name nothing registers)."""
    return name in backend_names() and get_backend(name).privileged


__all__ = [
    "DEFAULT_BACKEND",
    "ENTRY_POINT_GROUP",
    "backend_names",
    "get_backend",
    "is_privileged",
    "register_backend",
]
