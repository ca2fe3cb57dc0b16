"""Which package may import which: the layout's rules, checked on the source (every import, also lazy ones).

- ``aiv_verifier`` runs on a robot: none of its modules imports the simulator, the generator or the evaluation.
  Nor does any import a backend package (``aiv_checks``, or any package registering a per-view verifier under
  the entry point group ``aiv_verifier.backends``): it finds backends by name (``verification.registry``);
  ``tests/test_layout_imports.py`` checks that rule for every registered backend package.
- ``aiv_dataset`` is the format alone: no ROS, no other project package.
- ``aiv_synth`` (the generator) is a tool: it needs nothing but the format, and the only run-time package that
  imports it is ``aiv_robot_sim`` (the live-rendering robot stand-in).
- ``aiv_robot_sim`` is a robot, not part of the verification: it never imports the verifier, the simulator or
  the evaluation (it talks to them over topics only).
- ``aiv_robot`` (the robot adapter and the pre-grasp client) talks to the verifier and the robot over ROS only;
  its geometry, session and move procedure import no rclpy.
- ``aiv_bags`` (tour bags) reads and writes bags with rosbags, not rclpy, on top of the format alone.
- ``aiv_bags_ros`` (session recording and replay) is the ROS side of bags: it may use rclpy and the verifier,
  never the simulator, the generator or the evaluation (the evaluation starts its recorder as a process).
- ``aiv_models`` (local weights, devices, chat transports) is below the verifier: no ROS, no project package
  but itself.
- Only node modules import rclpy; the ROS-free cores stay importable without a ROS installation.
- Model libraries (torch, transformers, peft) are imported only inside functions of the backends that use them:
  no module imports them at its top level, so importing the verifier never loads torch.
- The in-process evaluation (``aiv_eval.run.in_process`` and every project module it can reach, lazy imports
  included) imports no ROS module: no rclpy, rosidl, message package, aiv_interfaces, node or message
  conversion module. The only ROS imports on that graph are the lazy ones inside the ROS helpers of
  ``aiv_common`` (building a QoS profile, declaring parameters on a node), which the in-process path never
  calls; ``tests/evaluator/test_in_process_without_ros.py`` checks the same on a real run.
- A node module (one that defines an rclpy Node) imports no other node module: what two nodes share (QoS of the
  topic between them, parameter tables, message conversions) lives in a module of its own.
- ``aiv_checks`` (the weight-free verifier's checks) sits on the verifier's ROS-free core: it may import
  ``aiv_verifier``'s core (claims, phrases, view and answer types, the backend interface) and registers the
  ``classical`` backend through its entry point, so no run-time module imports it; the research studies
  (``aiv_studies``) and tests may import it directly. It imports no ROS, no simulator, generator or
  evaluation.
- ``aiv_studies`` (the weight-free verifier's research studies: oracle audit, classical study, episode sweep)
  sits on top: it may import the evaluation, the verifier, the checks and the dataset's privileged ground truth,
  and imports no ROS; no other package imports it, lazily or not, so a robot's packages never reach a study.
- ``aiv_eval`` keeps its jobs in sub-packages (``run``, ``records``, ``analysis``, ``report``, ``evidence``,
  ``interchange``, ``bench``): at most a dozen modules at its top level.
- Modules stay small enough to read: at most 500 lines in ``aiv_verifier`` and ``aiv_checks`` (the code that runs
  on a robot), at most 800 anywhere in the workspace's packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.imports import PROJECT_PACKAGES, SRC
from support.imports import imported_names as _imports
from support.imports import imported_top_levels as _imported_top_levels
from support.imports import module_file as _module_file
from support.imports import module_name as _module_name
from support.imports import package_modules as _modules

#: The one run-time package allowed to import the generator.
SYNTH_USERS = {"aiv_robot_sim"}

FORBIDDEN: dict[str, set[str]] = {
    "aiv_checks": {
        "aiv_offline_sim",
        "aiv_synth",
        "aiv_eval",
        "aiv_bags",
        "aiv_bags_ros",
        "aiv_robot",
        "aiv_robot_sim",
        "aiv_models",
        "aiv_interfaces",
        "rclpy",
    },
    "aiv_models": {name for name in PROJECT_PACKAGES if name != "aiv_models"} | {"rclpy"},
    "aiv_verifier": {"aiv_offline_sim", "aiv_synth", "aiv_eval", "aiv_checks"},
    "aiv_dataset": {"aiv_common", "aiv_synth", "aiv_offline_sim", "aiv_verifier", "aiv_eval", "rclpy"},
    "aiv_synth": {"aiv_common", "aiv_offline_sim", "aiv_verifier", "aiv_eval", "rclpy"},
    "aiv_offline_sim": {"aiv_synth", "aiv_verifier", "aiv_eval"},
    "aiv_eval": {"aiv_synth"},
    "aiv_studies": {"rclpy", "aiv_interfaces"},
    "aiv_bags": {
        "aiv_common",
        "aiv_synth",
        "aiv_offline_sim",
        "aiv_verifier",
        "aiv_eval",
        "aiv_bags_ros",
        "rclpy",
    },
    "aiv_bags_ros": {"aiv_synth", "aiv_offline_sim", "aiv_eval"},
    "aiv_robot_sim": {"aiv_offline_sim", "aiv_verifier", "aiv_eval", "aiv_bags_ros"},
    "aiv_robot": {
        "aiv_synth",
        "aiv_offline_sim",
        "aiv_verifier",
        "aiv_eval",
        "aiv_bags_ros",
        "aiv_robot_sim",
    },
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_what_the_layout_allows(package: str) -> None:
    modules = _modules(package)
    assert modules, f"no modules found for {package} under {SRC}"
    offenders = {
        str(path.relative_to(SRC)): sorted(_imported_top_levels(path) & FORBIDDEN[package])
        for path in modules
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}


MODEL_LIBRARIES = {
    "torch",
    "transformers",
    "peft",
    "accelerate",
    "tokenizers",
    "safetensors",
    "huggingface_hub",
}


@pytest.mark.parametrize("package", PROJECT_PACKAGES)
def test_model_libraries_are_imported_only_where_a_model_is_loaded(package: str) -> None:
    offenders = {
        str(path.relative_to(SRC)): sorted(
            _imported_top_levels(path, module_level_only=True) & MODEL_LIBRARIES
        )
        for path in _modules(package)
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}


#: The research studies, the only modules outside the checks package that may import it (aiv_verifier finds the
#: classical backend through its entry point).
CHECKS_RESEARCH = "aiv_studies/aiv_studies/"


def test_no_run_time_module_imports_the_checks_package() -> None:
    users = {
        str(path.relative_to(SRC))
        for package in PROJECT_PACKAGES
        if package != "aiv_checks"
        for path in _modules(package)
        if "aiv_checks" in _imported_top_levels(path)
    }
    assert {user for user in users if not user.startswith(CHECKS_RESEARCH)} == set()


def test_no_package_imports_the_studies() -> None:
    users = {
        str(path.relative_to(SRC))
        for package in PROJECT_PACKAGES
        if package != "aiv_studies"
        for path in _modules(package)
        if "aiv_studies" in _imported_top_levels(path)
    }
    assert users == set()


#: Most modules (``__init__`` included) directly in ``aiv_eval``; everything else lives in a sub-package by job.
EVAL_TOP_LEVEL_LIMIT = 12


def test_the_evaluation_keeps_its_jobs_in_sub_packages() -> None:
    top = sorted(path.name for path in (SRC / "aiv_eval" / "aiv_eval").glob("*.py"))
    assert len(top) <= EVAL_TOP_LEVEL_LIMIT, top


def test_the_old_classical_backend_is_gone() -> None:
    assert not (SRC / "aiv_verifier" / "aiv_verifier" / "verification" / "classical").exists()


def test_only_the_robot_stand_in_imports_the_generator_at_run_time() -> None:
    users = {
        package
        for package in PROJECT_PACKAGES
        if package != "aiv_synth"
        for path in _modules(package)
        if "aiv_synth" in _imported_top_levels(path)
    }
    assert users == SYNTH_USERS


def test_the_robot_stand_in_keeps_rclpy_in_its_node_module() -> None:
    users = [path.name for path in _modules("aiv_robot_sim") if "rclpy" in _imported_top_levels(path)]
    assert users == ["node.py"]


def test_rclpy_stays_in_node_and_ros_helper_modules() -> None:
    ros_free_cores = [
        SRC / "aiv_verifier" / "aiv_verifier" / sub
        for sub in ("core", "query", "verification", "detection", "agent")
    ]
    users = [
        str(path.relative_to(SRC))
        for core in ros_free_cores
        for path in sorted(core.rglob("*.py"))
        if "rclpy" in _imported_top_levels(path)
    ]
    assert users == []


def test_every_project_package_is_a_ros_package_of_its_own() -> None:
    for package in PROJECT_PACKAGES:
        assert (SRC / package / "package.xml").is_file(), package
        assert (SRC / package / package / "__init__.py").is_file(), package


def test_the_robot_adapters_core_is_ros_free() -> None:
    core = ("geometry.py", "sector_session.py", "mover.py", "robot_adapter_parameters.py")
    users = [name for name in core if "rclpy" in _imported_top_levels(SRC / "aiv_robot" / "aiv_robot" / name)]
    assert users == []


IMPORT_FIRST_SCRIPT = """
import importlib, pkgutil, sys
package = sys.argv[1]
names = [package] + [m.name for m in pkgutil.walk_packages(importlib.import_module(package).__path__, package + '.')]
failed = []
for name in names:
    for loaded in [key for key in sys.modules if key == package or key.startswith(package + '.')]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as error:
        if 'circular import' in str(error) or 'partially initialized' in str(error):
            failed.append(f'{name}: {error}')
print('\\n'.join(failed))
"""


@pytest.mark.parametrize("package", PROJECT_PACKAGES)
def test_every_module_imports_first_without_an_import_cycle(package: str) -> None:
    """Each module, imported before anything else of its package, loads: no module depends on another having
    been imported first (``import aiv_verifier.evidence_tables`` once failed on core -> claims -> core)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", IMPORT_FIRST_SCRIPT, package], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", done.stdout


# ---- the in-process evaluation path, and nodes ------------------------------------------------------------------

#: Top-level names of ROS itself and of its generated interfaces.
ROS_TOP_LEVELS = {
    "rclpy",
    "aiv_interfaces",
    "rcl_interfaces",
    "launch",
    "launch_ros",
    "rosbag2_py",
    "rpyutils",
}
#: Project modules that exist to talk ROS (message conversions, the node-side episode port).
ROS_PROJECT_MODULES = {"aiv_verifier.ros_messages", "aiv_verifier.ros_port"}
#: Modules on the in-process graph whose functions for nodes import ROS lazily (building a QoS profile,
#: declaring parameters): their lazy imports are not followed, and are the only ROS imports allowed on the graph.
LAZY_ROS_HELPERS = {"aiv_common.qos"}


def _is_ros(name: str) -> bool:
    top = name.split(".")[0]
    return (
        top in ROS_TOP_LEVELS
        or top.startswith(("rosidl", "rmw"))
        or top.endswith(("_msgs", "_srvs"))
        or name in ROS_PROJECT_MODULES
        or name in NODE_MODULES
    )


def _reachable(start: str) -> dict[str, Path]:
    """Every project module ``start`` can load, following imports anywhere in a module (lazy ones too, except in
    :data:`LAZY_ROS_HELPERS`) and the packages above each module."""
    seen: dict[str, Path] = {}
    todo = [start]
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if name in seen or path is None:
            continue
        seen[name] = path
        parts = name.split(".")
        todo.extend(".".join(parts[:end]) for end in range(1, len(parts)))
        todo.extend(_imports(name, path, module_level_only=name in LAZY_ROS_HELPERS))
    return seen


#: The rclpy classes a node derives from (a managed node is a LifecycleNode).
NODE_BASES = {"Node", "LifecycleNode"}


def _node_modules() -> set[str]:
    """Modules that define an rclpy Node (or LifecycleNode) subclass."""
    found = set()
    for package in PROJECT_PACKAGES:
        for path in _modules(package):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            bases = [base for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for base in node.bases]
            if any(getattr(base, "id", getattr(base, "attr", "")) in NODE_BASES for base in bases):
                found.add(_module_name(path))
    return found


NODE_MODULES = _node_modules()


def test_the_node_modules_are_found() -> None:
    assert {
        "aiv_verifier.verifier_node",
        "aiv_verifier.detector_node",
        "aiv_eval.run.evaluator_node",
    } <= NODE_MODULES


def test_the_in_process_evaluation_reaches_no_ros_module() -> None:
    graph = _reachable("aiv_eval.run.in_process")
    assert {
        "aiv_eval.records.scoring",
        "aiv_eval.records.transcripts",
        "aiv_verifier.agent.factory",
        "aiv_common.qos",
    } <= set(graph)
    assert sorted(name for name in graph if _is_ros(name)) == []
    lazy_or_not = {
        name: sorted(imported for imported in _imports(name, path) if _is_ros(imported))
        for name, path in graph.items()
    }
    assert {
        name: found for name, found in lazy_or_not.items() if found and name not in LAZY_ROS_HELPERS
    } == {}
    at_import = {
        name: sorted(
            imported for imported in _imports(name, path, module_level_only=True) if _is_ros(imported)
        )
        for name, path in graph.items()
    }
    assert {name: found for name, found in at_import.items() if found} == {}


def test_no_node_module_imports_another_node_module() -> None:
    offenders = {
        name: sorted(
            imported for imported in _imports(name, _module_file(name) or Path()) if imported in NODE_MODULES
        )
        for name in NODE_MODULES
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_agent_factory_never_reaches_the_verifier_configuration() -> None:
    """One configuration path without a cycle: ``verifier_parameters`` imports the factory to learn its backends;
    the factory builds from nested mappings (``aiv_common.setting_tree``) and reaches the configuration module on
    no import, lazy ones included."""
    graph = _reachable("aiv_verifier.agent.factory")
    assert "aiv_common.setting_tree" in graph
    assert "aiv_verifier.verifier_parameters" in _reachable("aiv_verifier.verifier_node")
    assert not {"aiv_verifier.verifier_parameters", "aiv_verifier.config_schema"} & set(graph)


#: Longest module, in lines, per package (the default applies to every other package).
MODULE_LINE_LIMITS = {"aiv_verifier": 500, "aiv_checks": 500}
DEFAULT_MODULE_LINE_LIMIT = 800


def test_modules_stay_within_their_line_limits() -> None:
    too_long = []
    for package in PROJECT_PACKAGES:
        limit = MODULE_LINE_LIMITS.get(package, DEFAULT_MODULE_LINE_LIMIT)
        for path in sorted((SRC / package / package).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                too_long.append(f"{path.relative_to(SRC)}: {lines} lines (limit {limit})")
    assert too_long == []
