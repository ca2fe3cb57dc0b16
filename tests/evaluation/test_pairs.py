"""``evaluator.pairs`` without ROS: the names, the run identity, ``make demo``'s pair rule, the pool that hands
each attempt to a free pair, and the in-order runner that keeps every pair busy.

(The pairs over real DDS: tests/ros/test_evaluator_pairs.py and tests/ros/test_ros2_launch.py.)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiv_common.parameter_spec import ParameterError
from aiv_eval.cli import main as aiv_eval
from aiv_eval.run.in_flight import run_in_flight
from aiv_eval.run.pairs import (
    MAX_DEMO_PAIRS,
    PAIR_MEMORY_MIB,
    NoPairAvailableError,
    PairNotReady,
    PairPool,
    PairPoolStopped,
    demo_pair_count,
    demo_pair_names,
    in_pair,
    parse_pairs,
)
from aiv_eval.run.spec import EvalSpec, SpecError
from support.eval_specs import ORACLE_VETO_PARAMS


def test_pair_names_are_parsed_and_bad_ones_refused_in_one_line() -> None:
    assert parse_pairs("") == parse_pairs("  ") == ()
    assert parse_pairs("pair0, pair1") == ("pair0", "pair1")
    assert parse_pairs("/lab_pc2/pair0,robots/p_1") == ("/lab_pc2/pair0", "robots/p_1")
    for text, why in [
        ("pair0,,pair1", "an entry between commas is empty"),
        ("pair0,0pair", "'0pair' is no namespace"),
        ("pair 0", "'pair 0' is no namespace"),
        ("pair0/", "'pair0/' is no namespace"),
        ("~/pair0", "'~/pair0' is no namespace"),
        ("pair0,pair1,pair0", "'pair0' is named twice"),
    ]:
        with pytest.raises(ParameterError) as caught:
            parse_pairs(text)
        message = str(caught.value)
        assert message.startswith(f"parameter 'pairs' = {text!r}; ") and why in message, message
        assert len(message.splitlines()) == 1
    assert in_pair("pair0", "verify_instance") == "pair0/verify_instance"
    assert in_pair("/lab/pair0", "offline_sim") == "/lab/pair0/offline_sim"
    assert in_pair("", "verify_instance") == "verify_instance"


def _params(tmp_path: Path) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(ORACLE_VETO_PARAMS.format(run_dir=tmp_path / "r"))
    return path


def test_aiv_eval_refuses_bad_pairs_before_any_node_starts(tmp_path: Path, capsys) -> None:
    params = _params(tmp_path)
    assert aiv_eval(["run", str(params), "--set", "evaluator.pairs=pair0,pair0"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "'pair0' is named twice" in error, error
    # A name each pair's namespace cannot be put in front of.
    assert aiv_eval(["run", str(params), "--set", "evaluator.pairs=pair0,pair1",
                     "--set", "evaluator.verify_action=/verify_instance"]) == 2  # fmt: skip
    error = capsys.readouterr().err.strip()
    assert (
        "parameter 'verify_action' = '/verify_instance'; with pairs set it must be a relative name" in error
    )
    assert not (tmp_path / "r").exists()
    # Recording bags follows one pair's topics.
    assert aiv_eval(["run", str(params), "--record-bags", "--set", "evaluator.pairs=pair0,pair1"]) == 2
    assert "--record-bags records the topics of one simulator + verifier pair" in capsys.readouterr().err
    # The same names are accepted when they are valid (the spec is the one the nodes get).
    spec = EvalSpec.load(params, ["evaluator.pairs=pair0,pair1"])
    assert spec.evaluator["pairs"] == "pair0,pair1"
    with pytest.raises(SpecError, match="expected a string"):  # a YAML list: the names go comma-separated
        spec.set("evaluator", "pairs", ["pair0", "pair1"], where="test")


def test_pairs_are_no_part_of_the_run_identity(tmp_path: Path) -> None:
    params = _params(tmp_path)
    one = EvalSpec.load(params).run_config()
    two = EvalSpec.load(params, ["evaluator.pairs=pair0,pair1"]).run_config()
    assert one == two and one.run_id == two.run_id
    assert EvalSpec.load(params, ["evaluator.slice_end=3"]).run_config().run_id != one.run_id  # a real change


def test_make_demo_uses_one_pair_per_core_while_memory_holds_them() -> None:
    assert demo_pair_count(cores=1, available_mib=64_000) == 1
    assert demo_pair_count(cores=2, available_mib=64_000) == 2
    assert demo_pair_count(cores=64, available_mib=640_000) == MAX_DEMO_PAIRS
    assert demo_pair_count(cores=8, available_mib=3 * PAIR_MEMORY_MIB + 1) == 3
    assert demo_pair_count(cores=8, available_mib=100) == 1  # never fewer than one
    assert demo_pair_names(1) == () and demo_pair_names(3) == ("pair0", "pair1", "pair2")
    assert 1 <= demo_pair_count() <= MAX_DEMO_PAIRS  # this machine


# -- the pool ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    name: str


class Graph:
    """Which pairs' servers are up, and the configuration each runs (what the evaluator reads over ROS)."""

    def __init__(self, *up: str, config: dict[str, str] | None = None) -> None:
        self.up = set(up)
        self.config = config or {}
        self.joins: list[str] = []

    def ready(self, pair: Slot) -> bool:
        return pair.name in self.up

    def join(self, pair: Slot) -> str | None:
        self.joins.append(pair.name)
        if pair.name not in self.up:
            raise PairNotReady(f"{pair.name} went away while it was asked for its parameters")
        configuration = self.config.get(pair.name, "run")
        return None if configuration == "run" else f"it runs {configuration}"


def _pool(graph: Graph, *names: str) -> tuple[PairPool[Slot], list[Slot]]:
    slots = [Slot(name) for name in names]
    return PairPool(slots, ready=graph.ready, join=graph.join, poll_s=0.01), slots


def test_the_pool_hands_out_free_pairs_oldest_released_first_and_joins_each_once() -> None:
    graph = Graph("pair0", "pair1")
    pool, (pair0, pair1) = _pool(graph, "pair0", "pair1")
    assert pool.acquire(1.0) is pair0
    assert pool.acquire(1.0) is pair1
    pool.release(pair0)
    pool.release(pair1)
    assert [pool.acquire(1.0).name for _ in range(2)] == ["pair0", "pair1"]
    assert graph.joins == ["pair0", "pair1"]  # joined once, when first found ready
    assert pool.describe() == "pair0 joined, pair1 joined"


def test_a_caller_waits_for_a_held_pair_while_an_absent_pair_never_comes() -> None:
    graph = Graph("pair0")  # pair1 is on a machine that is not up
    pool, (pair0, _pair1) = _pool(graph, "pair0", "pair1")
    held = pool.acquire(1.0)
    assert held is pair0
    got: list[Slot] = []
    waiter = threading.Thread(target=lambda: got.append(pool.acquire(0.05)))
    waiter.start()
    waiter.join(timeout=0.5)  # far beyond its 0.05 s: a held pair comes back, so it does not give up
    assert waiter.is_alive() and not got
    pool.release(held)
    waiter.join(timeout=10.0)
    assert got == [pair0]


def test_a_late_pair_joins_when_it_answers_and_one_of_another_configuration_never_serves() -> None:
    graph = Graph("pair0", config={"pair1": "another configuration"})
    pool, (pair0, _pair1, pair2) = _pool(graph, "pair0", "pair1", "pair2")
    assert pool.acquire(1.0) is pair0
    graph.up |= {"pair1", "pair2"}  # both come up; pair1 is refused when it joins, pair2 serves
    assert pool.acquire(1.0) is pair2
    assert pool.refusals == {"pair1": "it runs another configuration"}
    pool.release(pair0)
    pool.release(pair2)
    assert [pool.acquire(1.0).name for _ in range(2)] == ["pair0", "pair2"]  # pair1 is never handed out
    assert graph.joins == ["pair0", "pair1", "pair2"]
    assert pool.describe() == "pair0 joined, pair1 refused, pair2 joined"


def test_no_pair_at_all_ends_the_wait_with_a_reason_and_an_away_pair_serves_once_back() -> None:
    graph = Graph()
    pool, (pair0,) = _pool(graph, "pair0")
    with pytest.raises(NoPairAvailableError) as caught:
        pool.acquire(0.05)
    assert "within 0 s (pair0 not seen yet)" in str(caught.value)
    graph.up.add("pair0")
    assert pool.acquire(1.0) is pair0
    pool.away(pair0)  # its verifier died
    pool.release(pair0)
    graph.up.clear()
    with pytest.raises(NoPairAvailableError, match="pair0 lost its servers"):
        pool.acquire(0.05)
    graph.up.add("pair0")  # respawned
    assert pool.acquire(1.0) is pair0 and graph.joins == ["pair0"]  # back without a second join
    pool.release(pair0)
    with pytest.raises(PairPoolStopped):
        pool.acquire(1.0, stopping=lambda: True)


def test_a_pool_of_only_refused_pairs_says_so_at_once() -> None:
    graph = Graph("pair0", config={"pair0": "seed 7"})
    pool, _ = _pool(graph, "pair0")
    with pytest.raises(NoPairAvailableError, match=r"every pair was refused \(pair0: it runs seed 7\)"):
        pool.acquire(60.0)


# -- the in-order runner with items started ahead ----------------------------------------------------------


def test_a_free_worker_takes_the_next_item_while_a_long_one_holds_the_head() -> None:
    # Item 0 runs until items 1..4 are done: with 2 workers, the second worker runs them one after another
    # while the first is still on item 0, instead of waiting for it behind one finished item.
    later_done = threading.Event()
    finished: list[int] = []
    lock = threading.Lock()

    def work(item: int) -> int:
        if item == 0:
            assert later_done.wait(timeout=30)
        with lock:
            finished.append(item)
            if len(finished) == 4:
                later_done.set()
        return item * 10

    results = list(run_in_flight(range(6), work, 2, ahead=4))
    assert results == [(item, item * 10) for item in range(6)]
    assert finished[:4] == [1, 2, 3, 4] and sorted(finished) == list(range(6))


def test_a_failure_stops_what_comes_after_it_and_sets_stopping() -> None:
    started: list[int] = []
    lock = threading.Lock()
    first_done = threading.Event()

    def work(item: int) -> int:
        with lock:
            started.append(item)
        if item == 0:
            assert first_done.wait(timeout=30)
        if item == 1:
            first_done.set()
            raise RuntimeError("episode 1 broke")
        return item

    stopping = threading.Event()
    results = []
    with pytest.raises(RuntimeError, match="episode 1 broke"):
        for pair in run_in_flight(range(8), work, 2, ahead=3, stopping=stopping):
            results.append(pair)
    assert results == [(0, 0)]  # what came before the failure is handed back
    assert stopping.is_set()
    assert set(started) <= {0, 1, 2}  # nothing queued behind the failure starts once it is known
    clean = threading.Event()
    assert list(run_in_flight([1, 2], lambda item: item, 2, ahead=1, stopping=clean)) == [(1, 1), (2, 2)]
    assert not clean.is_set()


# -- aiv-eval bench's pair rows ------------------------------------------------------------------------------


def test_bench_prints_the_main_job_with_one_and_n_pairs_beside_what_it_printed_before() -> None:
    from aiv_eval.bench.ros_vs_inprocess import ModeTiming, format_report

    def timing(mode: str, loop_s: float, total_s: float, rss: dict[str, float]) -> ModeTiming:
        return ModeTiming(mode, 48, 240, loop_s, total_s, rss, 0, verifier_calls=94)

    inproc = timing("in-process", 20.0, 21.0, {"aiv-eval (in-process)": 300.0})
    one = timing("ROS", 24.0, 26.0, {"verifier": 400.0, "evaluator": 120.0})
    two = timing("ROS 2 pairs", 15.0, 19.0, {"pair0/verifier (2 pairs)": 410.0, "evaluator (2 pairs)": 130.0})
    before = format_report(inproc, one, identical=True)
    assert "| measure | in-process | ROS (3 nodes) |" in before and "no run with more pairs" in before
    report = format_report(inproc, one, True, two, 2, pairs_identical=True)
    assert "| measure | in-process | ROS (3 nodes) | ROS, 2 pairs (5 nodes) |" in report
    assert "| evaluation loop (s) | 20.00 | 24.00 | 15.00 |" in report
    assert "| episodes per second | 2.400 | 2.000 | 3.200 |" in report
    assert "| pair0/verifier (2 pairs) | 410 | n/a |" in report and "| evaluator | 120 | n/a |" in report
    assert (
        "main job over ROS, 1 pair vs 2 pairs: evaluation loop 24.00 s vs 15.00 s, whole command 26.00 s vs "
        "19.00 s, 2.000 vs 3.200 episodes/s" in report
    )
    assert "2 pairs / 1 pair episodes per second: 1.60x" in report
    assert "identical results.jsonl with 1 and 2 pairs: yes" in report
    assert "identical results.jsonl with 1 and 2 pairs: NO" in format_report(inproc, one, True, two, 2, False)
    # Everything the one-pair report printed is still there, in the same order.
    kept = [line for line in before.splitlines() if "no run with more pairs" not in line and "|" not in line]
    assert [line for line in report.splitlines() if line in kept] == kept
