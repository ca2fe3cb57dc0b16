"""No import circles between the workspace's modules, and aiv_verifier imports none of its backend packages.

Read from the source (:mod:`support.imports`, nothing is imported), over every module of every project package.

What counts as "module A depends on module B" (an edge A -> B of the graph searched for cycles):

- every ``import`` / ``from ... import`` statement in A's file, at module level or inside a function, method
  or class body (a lazy import is a dependency too: it runs whenever its function does, and a circle that
  only closes at call time is still a circle between the two modules' jobs);
- ``import a.b.c`` depends on the module ``a.b.c``; ``from a.b import c`` depends on ``a.b.c`` when ``c`` is a
  submodule, else on ``a.b`` (``c`` is a name its ``__init__`` or module body defines, so that body must have
  run); relative imports are resolved against A's package.

What does not count:

- the packages above a module (``a`` and ``a.b`` for ``a.b.c``), which Python imports first on its own: a
  package's ``__init__`` is in ``sys.modules`` before any of its submodules runs, so an ``__init__`` that
  imports its submodules (``from . import x``, ``from .x import y``) is no circle with a submodule that
  imports a sibling (``from .z import w``). It is one with a submodule that reads a name from the package
  itself (``from . import name`` / ``from pkg import name`` where ``name`` is not a submodule): that is an
  edge to the ``__init__``;
- imports under ``if TYPE_CHECKING:``, which never run;
- dynamic imports (``importlib.import_module``), which the source does not name;
- a module importing itself, and anything outside the project packages.

A cycle is then any strongly connected group of two or more modules; each is reported as one shortest circle
through it, with the line of every import on the way.

The second rule: aiv_verifier finds its per-view verifier backends by name (entry point group
``aiv_verifier.backends``), so none of its modules imports a package that registers one there (read from the
``setup.py`` files) -- ``aiv_checks`` among them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support.imports import (
    PROJECT_PACKAGES,
    SRC,
    describe_cycle,
    import_cycles,
    import_graph,
    imported_top_levels,
    package_modules,
)

BACKEND_GROUP = "aiv_verifier.backends"


def test_no_module_takes_part_in_an_import_cycle() -> None:
    graph = import_graph()
    assert "aiv_checks.registry" in graph and "aiv_verifier.core.nbv" in graph
    assert [describe_cycle(graph, cycle) for cycle in import_cycles(graph)] == []


def test_the_cycle_search_finds_a_planted_cycle() -> None:
    """The check itself: a circle of three modules through a lazy import is found and reported in order."""
    graph = {"p.a": {"p.b": 3}, "p.b": {"p.c": 5, "p.d": 1}, "p.c": {"p.a": 40}, "p.d": {}}
    cycles = import_cycles(graph)
    assert cycles == [["p.a", "p.b", "p.c", "p.a"]]
    assert (
        describe_cycle(graph, cycles[0])
        == "p.a -> p.b (line 3 of p.a) -> p.c (line 5 of p.b) -> p.a (line 40 of p.c)"
    )


def _entry_point_packages(setup_py: Path, group: str) -> set[str]:
    """Top-level packages the entry points of ``group`` in a setup.py name (``name = pkg.module:attr``)."""
    tree = ast.parse(setup_py.read_text(encoding="utf-8"), filename=str(setup_py))
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == group:
                entries = ast.literal_eval(value)
                found.update(entry.split("=", 1)[1].strip().split(".")[0] for entry in entries)
    return found


def backend_packages() -> set[str]:
    """Every project package that registers a per-view verifier backend, other than aiv_verifier itself."""
    return {
        package
        for setup_py in sorted(SRC.glob("*/setup.py"))
        for package in _entry_point_packages(setup_py, BACKEND_GROUP)
    } - {"aiv_verifier"}


def test_aiv_verifier_imports_no_backend_package() -> None:
    backends = backend_packages()
    assert "aiv_checks" in backends, f"aiv_checks/setup.py registers no {BACKEND_GROUP} entry point"
    assert set(PROJECT_PACKAGES) >= backends
    offenders = {
        str(path.relative_to(SRC)): sorted(imported_top_levels(path) & backends)
        for path in package_modules("aiv_verifier")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_installed_metadata_registers_the_classical_backend() -> None:
    """The build wrote what setup.py declares: the entry point is seen by importlib.metadata (a stale build of
    ros2_ws -- setup.py changed, no rebuild since -- fails here; ``make build`` fixes it)."""
    from importlib.metadata import entry_points

    points = {point.name: point.value for point in entry_points(group=BACKEND_GROUP)}
    assert points.get("classical") == "aiv_checks.backend:BACKEND", points
