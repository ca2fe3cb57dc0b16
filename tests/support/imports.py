"""The workspace's Python imports, read from the source with :mod:`ast` (nothing is imported).

The layout tests (``tests/test_package_boundaries.py``, ``tests/test_layout_imports.py``) judge which module
may import which; they share this one reader so that "what a module imports" means the same to both: every
``import`` / ``from ... import`` statement in the file, at module level or inside a function or class (a lazy
import still runs whenever that function does). Relative imports are resolved against the module's package.
Dynamic imports (``importlib.import_module(name)``) are not seen.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "ros2_ws" / "src"
#: The workspace's Python packages, each a ROS package of its own (``ros2_ws/src/<name>/<name>``).
PROJECT_PACKAGES = (
    "aiv_common",
    "aiv_checks",
    "aiv_dataset",
    "aiv_synth",
    "aiv_offline_sim",
    "aiv_verifier",
    "aiv_eval",
    "aiv_studies",
    "aiv_bags",
    "aiv_bags_ros",
    "aiv_robot_sim",
    "aiv_robot",
    "aiv_models",
)


def package_modules(package: str) -> list[Path]:
    """Every source file of a project package, sorted."""
    return sorted((SRC / package / package).rglob("*.py"))


def module_name(path: Path) -> str:
    """The dotted name of a project source file (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(SRC).parts[1:])
    parts[-1] = parts[-1].removesuffix(".py")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_file(name: str) -> Path | None:
    """The source file of a project module (or package), None for anything outside the project."""
    parts = name.split(".")
    if parts[0] not in PROJECT_PACKAGES:
        return None
    stem = SRC / parts[0] / Path(*parts)
    if stem.with_suffix(".py").is_file():
        return stem.with_suffix(".py")
    return stem / "__init__.py" if (stem / "__init__.py").is_file() else None


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_type_checking(node: ast.If) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``: imports for the type checker, never run."""
    return getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"


def _statements(
    body: list[ast.stmt], *, module_level_only: bool, skip_type_checking: bool
) -> Iterator[ast.stmt]:
    """The statements of ``body`` and every statement nested in them (functions' bodies unless
    ``module_level_only``; ``if TYPE_CHECKING:`` blocks unless ``skip_type_checking``)."""
    for node in body:
        if module_level_only and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if skip_type_checking and isinstance(node, ast.If) and _is_type_checking(node):
            # The ``else:`` of a TYPE_CHECKING test does run.
            yield from _statements(
                node.orelse, module_level_only=module_level_only, skip_type_checking=skip_type_checking
            )
            continue
        yield node
        children = [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)]
        yield from _statements(
            children, module_level_only=module_level_only, skip_type_checking=skip_type_checking
        )


def _from_module(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` statement of module ``name`` (file ``path``) reads from."""
    if not node.level:
        return node.module or ""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_top_levels(path: Path, *, module_level_only: bool = False) -> set[str]:
    """Top-level package names a module imports by absolute imports: anywhere (also lazily, inside
    functions), or only by statements at module level (``module_level_only``: not inside a function)."""
    tree = _parse(path)
    names: set[str] = set()
    for node in tree.body if module_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def imported_names(name: str, path: Path, *, module_level_only: bool = False) -> set[str]:
    """Absolute names a module imports (relative imports resolved; ``from m import x`` gives m and m.x, since x
    may be a submodule): anywhere, or only in statements that run at import (not inside a function)."""
    names: set[str] = set()
    for node in _statements(_parse(path).body, module_level_only=module_level_only, skip_type_checking=False):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(name, path, node)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _deepest_module(dotted: str) -> str | None:
    """The longest prefix of ``dotted`` that is a project module (``a.b.name`` -> ``a.b``), None outside it."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if module_file(candidate) is not None:
            return candidate
    return None


def module_dependencies(name: str, path: Path) -> dict[str, int]:
    """The project modules whose body must run for module ``name``'s imports, each with the line of its first
    import: see ``tests/test_layout_imports.py`` for what counts (and what does not)."""
    found: dict[str, int] = {}
    for node in _statements(_parse(path).body, module_level_only=False, skip_type_checking=True):
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [_deepest_module(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(name, path, node)
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                targets.append(submodule if module_file(submodule) else _deepest_module(module))
        for target in targets:
            if target is not None and target != name:
                found.setdefault(target, node.lineno)
    return found


def import_graph(packages: tuple[str, ...] = PROJECT_PACKAGES) -> dict[str, dict[str, int]]:
    """Module -> {module it depends on: line of the import}, for every module of ``packages``."""
    return {
        module_name(path): module_dependencies(module_name(path), path)
        for package in packages
        for path in package_modules(package)
    }


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One shortest cycle (``[a, b, ..., a]``) per strongly connected group of modules, sorted: every module
    of a group reaches every other one, so each group holds at least one cycle and breaking them all takes
    looking at the group as a whole."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative (the graph is deep)
        work = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, {})))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(_shortest_cycle(graph, group) for group in groups)


def _shortest_cycle(graph: dict[str, dict[str, int]], group: set[str]) -> list[str]:
    """The shortest cycle through the alphabetically first module of ``group`` (breadth first, inside it)."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph.get(node, {})):
                if target not in group:
                    continue
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start} in its own strongly connected group")


def describe_cycle(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    """``a -> b (line 12 of a) -> a (line 40 of b)``: the cycle with the import line of each step."""
    steps = [cycle[0]]
    for source, target in itertools.pairwise(cycle):
        steps.append(f"{target} (line {graph[source][target]} of {source})")
    return " -> ".join(steps)
