"""Camera height levels in the environment (issue #41): ``up`` / ``down`` between views above and below.

The episodes are the capture pipeline's ``micro`` preset, once as it is (one level) and once with views one
level above and below added (:mod:`support.leveled_dataset`, whose RULES block, trap, drop or thin out some of
them). Planar moves must resolve exactly as in the one-level episode; ``up`` / ``down`` follow the benchmark's
rules for unreachable views, traps and visited views, each costing one step; a one-level episode refuses them
without a step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiv_dataset import PInVerifyDataset
from aiv_dataset.levels import level_tag_suffix
from aiv_dataset.vocabulary import DIRECTIONS, MoveOutcome
from aiv_eval.run.env_port import EnvPort
from aiv_offline_sim.environment import Action, InvalidActionError, PInVerifyEnv, StepInfo
from aiv_offline_sim.episode_service import EpisodeService
from aiv_verifier.agent.port import FrameRequest
from PIL import Image
from support.leveled_dataset import expected_view, recolour, rule

INDEX = "val/pv_index_all.jsonl"
#: Seeds of the start-sector draw: together they start every episode in each of its valid sectors.
SEEDS = range(8)
ONE_LEVEL_UP = "this episode has one camera height level; 'up' needs a dataset with height levels"


def make_env(root: Path, **kwargs) -> PInVerifyEnv:
    dataset = PInVerifyDataset(root)
    kwargs.setdefault("privileged", True)
    return PInVerifyEnv(
        dataset.read_pair_index(INDEX), dataset, descriptions=dataset.load_descriptions(), **kwargs
    )


def one_pair_per_episode(env: PInVerifyEnv) -> list[int]:
    seen: dict[str, int] = {}
    for index, record in enumerate(env.records):
        seen.setdefault(record.episode_path, index)
    return sorted(seen.values())


def starts(root: Path):
    """(pair index, seed) of every distinct start: one pair per episode, each seed."""
    for index in one_pair_per_episode(make_env(root)):
        for seed in SEEDS:
            yield index, seed


def pixels(path: str | None) -> np.ndarray:
    assert path is not None
    return np.asarray(Image.open(path).convert("RGB"))


def transitions(env: PInVerifyEnv, index: int, script: list[str]) -> list[tuple]:
    """Everything a planar script does to an episode, comparable between datasets."""
    observation = env.reset(index)
    seen = [(observation.current_sector, observation.privileged.capture_tag, observation.available_sectors)]
    for direction in script:
        observation, _, done, info = env.step(Action.move(direction))
        seen.append((info, observation.privileged.capture_tag, observation.navigation_failed))
        if done:
            break
    return seen


SCRIPTS = [
    ["front-left", "back", "front", "back-right", "front-right", "back-left"],
    ["back", "back", "front-left", "back-left", "front-right", "back-right"],
    ["front-right", "front-right", "front-right", "front-right", "front", "back"],
]


@pytest.mark.parametrize("height_levels", ["all", "eye"])
def test_planar_moves_are_the_one_level_episodes_transitions(micro_root, leveled_root, height_levels):
    """Views above and below change nothing about the ring: same sectors, captures, outcomes, traps, warnings."""
    for seed in (0, 3, 5):
        one_level = make_env(micro_root, seed=seed)
        leveled = make_env(leveled_root, seed=seed, height_levels=height_levels)
        for index in one_pair_per_episode(one_level):
            for script in SCRIPTS:
                assert transitions(leveled, index, script) == transitions(one_level, index, script)
            assert leveled.sector_map.slots == one_level.sector_map.slots
            assert leveled.current_level == 0
            observation = leveled.observe()
            assert observation.levels == ((-1, 0, 1) if height_levels == "all" else (0,))
            assert all(
                step.to_reference_dict() == ref.to_reference_dict()
                for step, ref in zip(leveled.history, one_level.history, strict=True)
            )


def test_up_and_down_follow_the_level_rules_at_every_start(leveled_root):
    """From every start: up / down land on the same sector one level away with the far-first view, or are
    unreachable (blocked or missing views); a trap view raises the flag; a level not there is unreachable; the
    view left behind is visited; every request costs one step."""
    cases: set[str] = set()
    for index, seed in starts(leveled_root):
        env = make_env(leveled_root, seed=seed)
        for direction, level in (("up", 1), ("down", -1)):
            start = env.reset(index)
            raw, sector = start.privileged.raw_sector, start.current_sector
            observation, _, done, info = env.step(Action.move(direction))
            assert not done and observation.step_count == 1 and info.step == 1
            assert (info.from_sector, info.from_level, info.direction) == (sector, 0, direction)
            expected = expected_view(level, raw)
            if expected is None:
                cases.add(f"{direction} unreachable ({'blocked' if rule(level, raw).blocked else 'missing'})")
                assert info.outcome is MoveOutcome.UNREACHABLE and info.navigation_failed
                assert (info.to_sector, info.to_level, observation.current_level) == (sector, 0, 0)
                assert observation.navigation_failed and observation.rgb_path == start.rgb_path
                assert (
                    info.visibility_warning
                    == f"The view {direction} is unreachable; the agent has not moved."
                )
                continue
            kind, trap = expected
            cases.add(f"{direction} {kind}{' trap' if trap else ''}")
            assert info.outcome is MoveOutcome.MOVED and info.trap_view is trap
            assert (info.to_sector, info.to_level) == (sector, level)
            assert (observation.current_sector, observation.current_level) == (sector, level)
            assert observation.available_sectors == env.level_maps[level].available
            view = observation.privileged
            assert view.capture_tag == f"s{raw}_{kind}{level_tag_suffix(level)}" and view.level == level
            assert view.mask_meets_threshold is not trap
            start_kind = start.privileged.view_type
            eye_image = start.rgb_path.replace(f"rgb_s{raw}_{start_kind}", f"rgb_s{raw}_{kind}")
            assert np.array_equal(pixels(observation.rgb_path), recolour(pixels(eye_image), level))
            assert view.visited_view_visibility == {(sector, 0): True, (sector, level): not trap}
            assert dict(view.visited_visibility) == {sector: not trap}  # the current level's part
            # No second level that way, and the eye-level view is behind: both fail, both cost a step.
            observation, _, _, again = env.step(Action.move(direction))
            assert again.outcome is MoveOutcome.UNREACHABLE and again.to_level == level
            back = "down" if direction == "up" else "up"
            observation, _, _, returned = env.step(Action.move(back))
            assert returned.outcome is MoveOutcome.ALREADY_VISITED and returned.to_level == level
            assert (
                returned.visibility_warning
                == f"The view {back} was already visited; the agent has not moved."
            )
            assert observation.step_count == 3 and env.visited_views == {(sector, 0), (sector, level)}
    assert cases >= {
        "up far",
        "up far trap",
        "up unreachable (blocked)",
        "down far",
        "down near",
        "down unreachable (missing)",
    }, cases


def test_planar_moves_keep_the_level_and_resolve_among_its_views(micro_root, leveled_root):
    """After ``up``, each planar direction goes where it goes in the one-level episode, at the upper level,
    unless that sector has no view up there (unreachable); visited is checked at the current level."""
    compared = 0
    for index, seed in starts(leveled_root):
        one_level = make_env(micro_root, seed=seed)
        leveled = make_env(leveled_root, seed=seed)
        for direction in DIRECTIONS:
            one_level.reset(index)
            reference, _, _, ref = one_level.step(Action.move(direction))
            leveled.reset(index)
            _, _, _, up = leveled.step(Action.move("up"))
            if up.outcome is not MoveOutcome.MOVED:
                continue
            observation, _, _, info = leveled.step(Action.move(direction))
            compared += 1
            assert info.from_level == info.to_level == observation.current_level == 1
            raw = reference.privileged.raw_sector
            if ref.outcome is MoveOutcome.MOVED and rule(1, raw).blocked:
                assert info.outcome is MoveOutcome.UNREACHABLE and info.to_sector == info.from_sector
                continue
            assert (info.outcome, info.to_sector, info.target_sector) == (
                ref.outcome,
                ref.to_sector,
                ref.target_sector,
            )
            if info.outcome in (MoveOutcome.MOVED, MoveOutcome.STAYED):
                assert observation.privileged.capture_tag == f"{reference.privileged.capture_tag}_above"
                assert info.trap_view is (rule(1, raw).trap or ref.trap_view)
    assert compared >= 50


def test_level_maps_share_the_eye_level_sectors(leveled_root):
    """Every level's captures sit in the virtual sector of the eye-level capture of the same raw sector, and
    the layout lists them all with their level (what a verifier learns the levels from)."""
    env = make_env(leveled_root)
    for index in one_pair_per_episode(env):
        observation = env.reset(index)
        eye_sector = {
            entry.capture_tag: entry.virtual_sector
            for entry in observation.privileged.layout
            if entry.level == 0
        }
        levels = set()
        for entry in observation.privileged.layout:
            levels.add(entry.level)
            base = entry.capture_tag.removesuffix(level_tag_suffix(entry.level))
            assert entry.virtual_sector == eye_sector[base], entry
            assert entry.capture_tag.endswith(level_tag_suffix(entry.level))
        assert levels == {-1, 0, 1}
        assert env.level_maps.levels == observation.levels == (-1, 0, 1)
        assert env.level_maps[1].reference_capture is None  # theta_ref is the eye level's


def test_a_one_level_episode_refuses_up_and_down_without_a_step(micro_root):
    env = make_env(micro_root, max_steps=1)
    start = env.reset(0)
    for text, word in (("up", "up"), ("Down (MLLM-Reasoning)", "down")):
        observation, _, done, info = env.step(Action.move(text))
        assert info.outcome is MoveOutcome.REJECTED and not done and not info.forced_stop
        assert info.refusal == ONE_LEVEL_UP.replace("'up'", repr(word))
        assert info.step == 0 and observation.step_count == 0 and env.history == ()
        assert observation == start
    # The budget of one step is still there: the next request is the episode's one step (the forced stop).
    _, _, done, info = env.step(Action.move("front-left"))
    assert done and info.forced_stop and info.step == 1


def test_strict_directions_accept_up_and_down(micro_root, leveled_root):
    strict = make_env(micro_root, strict_directions=True)
    strict.reset(0)
    assert strict.step(Action.move("up")).info.refusal == ONE_LEVEL_UP
    with pytest.raises(InvalidActionError):
        strict.step(Action.move("upward"))
    leveled = make_env(leveled_root, strict_directions=True, seed=3)
    leveled.reset(0)
    assert leveled.step(Action.move("DOWN")).info.outcome is not MoveOutcome.REJECTED


def test_eye_option_plays_a_leveled_dataset_as_one_level(leveled_root):
    env = make_env(leveled_root, height_levels="eye")
    observation = env.reset(0)
    assert observation.levels == (0,) and {entry.level for entry in observation.privileged.layout} == {0}
    assert all(view.height_level == 0 for view in observation.privileged.viewpoints)
    assert env.step(Action.move("up")).info.refusal == ONE_LEVEL_UP
    with pytest.raises(ValueError, match="height_levels must be one of"):
        make_env(leveled_root, height_levels="above")


def test_the_service_answers_height_moves_with_the_level(micro_root, leveled_root):
    service = EpisodeService(make_env(leveled_root, seed=3), None)
    service.env.reset(0)
    before = service.env.observe()
    reply = service.move("up")
    assert reply.outcome is MoveOutcome.MOVED and reply.level == 1 and reply.new_view
    assert reply.sector == before.current_sector and reply.steps_taken == 1
    assert np.array_equal(service.image_of(reply.observation), recolour(pixels(before.rgb_path), 1))
    failed = service.move("up")
    assert failed.outcome is MoveOutcome.UNREACHABLE and failed.level == 1 and not failed.new_view
    assert "up, down" in service.move("sideways").message

    one_level = EpisodeService(make_env(micro_root), None)
    one_level.env.reset(0)
    refused = one_level.move("up")
    assert (refused.outcome, refused.message, refused.steps_taken, refused.level) == (
        MoveOutcome.REJECTED,
        ONE_LEVEL_UP,
        0,
        0,
    )
    assert refused.observation is None and one_level.env.step_count == 0
    assert "up" not in one_level.move("sideways").message.split("expected one of")[1]


@pytest.mark.parametrize("privileged", [True, False])
def test_in_process_port_reports_levels(leveled_root, privileged):
    """The in-process port says where the camera is after ``up`` and the episode's levels, as the verifier
    node learns them over ROS (the privileged layout; nothing without it)."""
    env = make_env(leveled_root, seed=3, privileged=privileged)
    port = EnvPort.open(env, 0)
    first = port.frame(
        FrameRequest(
            stamp=None, step_count=0, sector=port.observation.current_sector, navigation_failed=False
        )
    )
    report = port.move("up")
    assert report.outcome is MoveOutcome.MOVED and report.level == 1 and report.sector == first.current_sector
    frame = port.frame(
        FrameRequest(stamp=None, step_count=1, sector=report.sector, navigation_failed=False, level=1)
    )
    assert frame.current_level == 1 and first.current_level == 0
    assert frame.levels == ((-1, 0, 1) if privileged else (0,))
    if privileged:
        assert frame.capture_tag.endswith("_above")
    else:
        assert (first.image_key, frame.image_key) == (first.current_sector, (first.current_sector, 1))
    # Without a layout the verifier's height_levels parameter says the levels, as over ROS.
    told = EnvPort.open(make_env(leveled_root, seed=3, privileged=privileged), 0, levels=(0, 1))
    assert told.frame(FrameRequest(None, 0, 0, False)).levels == ((-1, 0, 1) if privileged else (0, 1))
    refused = EnvPort.open(make_env(leveled_root, height_levels="eye"), 0).move("up")
    assert (refused.outcome, refused.message, refused.level) == (MoveOutcome.REJECTED, ONE_LEVEL_UP, 0)


def test_step_info_defaults_keep_the_reference_form():
    info = StepInfo(step=2, decision="Unsure", outcome=MoveOutcome.UNREACHABLE)
    assert (info.from_level, info.to_level, info.refusal) == (0, 0, None)
    assert info.to_reference_dict() == {"navigation_failed": True, "decision": "Unsure"}
