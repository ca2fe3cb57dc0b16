"""Golden tests pinning every rule of spec §3 (the reference PInVerifyEnv semantics).

Geometry of the hand-written episodes: views stand at the centre of their raw sector's 30-degree window
(theta = 30*S + 15 degrees around the goal), so virtual sector v = (S - S_ref) / 2 mod 6.
"""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest
from aiv_dataset import DatasetError, PInVerifyDataset, parse_pair_record
from aiv_dataset.azimuth import virtual_index, wrap_angle
from aiv_dataset.fields import Where
from aiv_dataset.vocabulary import MoveOutcome
from aiv_offline_sim.environment import (
    SEED_POLICIES,
    TRAP_WARNING,
    Action,
    EpisodeFinishedError,
    EpisodeNotStartedError,
    InvalidActionError,
    Observation,
    PInVerifyEnv,
)
from aiv_offline_sim.sector_map import within_sector
from support.tiny_dataset import GOAL, RAW_SECTORS, EpisodeSpec, View, image_color, ring

# Start index into the sorted valid list for n = 1..6 valid sectors, per seed (legacy RandomState.choice).
GOLDEN_START = {
    42: [0, 0, 2, 2, 3, 3],
    43: [0, 0, 0, 0, 4, 4],
    44: [0, 0, 0, 0, 4, 4],
    45: [0, 1, 2, 3, 3, 3],
}


def only_visible(raw_sector: int, **kwargs) -> EpisodeSpec:
    """Every sector navigable, only ``raw_sector`` visible: the start is forced there."""
    traps = set(RAW_SECTORS) - {raw_sector}
    return EpisodeSpec(views=ring(traps=traps, **kwargs))


def shown_tag(env, sector: int) -> str:
    smap = env.sector_map
    return smap.captures[smap.capture_for(sector, env.view_priority)].tag


# --- §3.2 virtual sector map -------------------------------------------------------------------------------


def test_full_ring_maps_raw_sector_pairs_onto_six_virtual_sectors(make_env):
    env, _ = make_env()
    env.reset(0)
    assert env.sector_map.available == (0, 1, 2, 3, 4, 5)
    assert [shown_tag(env, v) for v in range(6)] == [f"s{2 * v}_far" for v in range(6)]


def test_virtual_zero_is_the_lowest_navigable_raw_sector(make_env):
    env, _ = make_env(EpisodeSpec(views=ring(unreachable={0, 2})))
    obs = env.reset(0)
    assert obs.available_sectors == (0, 1, 2, 3)
    assert [shown_tag(env, v) for v in range(4)] == ["s4_far", "s6_far", "s8_far", "s10_far"]


def test_far_view_has_priority_and_near_only_fills_in(make_env):
    views = ring()
    views[2] = View(2, "far", navigable=False, visible=False)  # sector 2 keeps only its near view
    env, _ = make_env(EpisodeSpec(views=views))
    env.reset(0)
    assert shown_tag(env, 0) == "s0_far"
    assert shown_tag(env, 1) == "s2_near"


def test_view_priority_near_shows_near_views(make_env):
    env, _ = make_env(view_priority="near")
    env.reset(0)
    assert [shown_tag(env, v) for v in range(6)] == [f"s{2 * v}_near" for v in range(6)]


@pytest.mark.parametrize(("near_first", "expected_sector"), [(True, 2), (False, 1)])
def test_reference_azimuth_is_first_navigable_capture_after_stable_sort(
    make_env, near_first, expected_sector
):
    # s0_near at 0 deg, s0_far at 29 deg, s2_far at 91 deg: with theta_ref = 0, 91/60 = 1.52 -> v2;
    # with theta_ref = 29, 62/60 = 1.03 -> v1. File order inside sector 0 decides which is the reference.
    s0 = [View(0, "near", angle_deg=0.0), View(0, "far", angle_deg=29.0)]
    if not near_first:
        s0.reverse()
    views = [View(2, "far", angle_deg=91.0), *s0]  # listed out of sector order on purpose
    env, _ = make_env(EpisodeSpec(views=views))
    env.reset(0)
    s2_far = next(i for i, c in enumerate(env.sector_map.captures) if c.tag == "s2_far")
    assert env.sector_map.capture_sector[s2_far] == expected_sector
    assert env.sector_map.captures[0].tag == ("s0_near" if near_first else "s0_far")


def test_virtual_index_uses_round_half_even_like_the_reference():
    assert virtual_index(math.radians(30), 0.0) == 0  # 0.5 -> 0 (half to even)
    assert virtual_index(math.radians(90), 0.0) == 2  # 1.5 -> 2
    assert virtual_index(math.radians(270), 0.0) == 4  # 4.5 -> 4
    assert virtual_index(math.radians(330), 0.0) == 0  # 5.5 -> 6 -> 0
    assert virtual_index(math.radians(-60), 0.0) == 5
    assert virtual_index(math.radians(100), math.radians(40)) == 1


def test_capture_without_coordinates_goes_to_sector_zero_without_overwriting(make_env):
    views = ring()
    views[2] = View(2, "far", position=None)  # no coordinates
    env, _ = make_env(EpisodeSpec(views=views))
    env.reset(0)
    smap = env.sector_map
    s2_far = next(i for i, c in enumerate(smap.captures) if c.tag == "s2_far")
    assert smap.capture_sector[s2_far] == 0
    assert shown_tag(env, 0) == "s0_far"  # not overwritten
    assert shown_tag(env, 1) == "s2_near"  # sector 1 lost its far view


def test_episode_without_any_coordinates_observes_first_capture_and_cannot_move(make_env):
    views = [View(s, "far", position=None) for s in (4, 0, 2)]
    env, _ = make_env(EpisodeSpec(views=views))
    obs = env.reset(0)
    assert obs.available_sectors == ()
    assert obs.current_sector == 0
    assert obs.rgb_path.endswith("rgb_s0_far.png")
    for direction in ("front", "front-left", "back"):
        _, _, done, info = env.step(Action.move(direction))
        assert info.navigation_failed and info.outcome is MoveOutcome.UNREACHABLE
        assert not done


# --- §3.3 start sector -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_valid", range(1, 7))
def test_fixed_seed_policy_starts_at_element_0_0_2_2_3_3(make_env, n_valid):
    visible = RAW_SECTORS[6 - n_valid :]  # virtual sectors 6-n .. 5 are valid
    spec = EpisodeSpec(views=ring(traps=set(RAW_SECTORS) - set(visible)))
    env, _ = make_env(spec, copies=4, seed_policy="per_episode_fixed")
    valid = list(range(6 - n_valid, 6))
    expected = valid[[0, 0, 2, 2, 3, 3][n_valid - 1]]
    for index in range(4):  # the same start for every position in the index
        assert env.reset(index).current_sector == expected


@pytest.mark.parametrize("n_valid", range(1, 7))
def test_seed_plus_index_policy_uses_legacy_randomstate_of_42_plus_i(make_env, n_valid):
    visible = RAW_SECTORS[:n_valid]
    spec = EpisodeSpec(views=ring(traps=set(RAW_SECTORS) - set(visible)))
    env, _ = make_env(spec, copies=4, seed_policy="seed_plus_index")
    for index in range(4):
        obs = env.reset(index)
        assert obs.episode_seed == 42 + index
        assert obs.current_sector == GOLDEN_START[42 + index][n_valid - 1]
        assert obs.current_sector == int(np.random.RandomState(42 + index).choice(list(range(n_valid))))


@pytest.mark.parametrize("n_valid", range(1, 7))
def test_seed_plus_slice_index_policy_counts_from_the_slice_start(make_env, n_valid):
    # One reference evaluate.py over +start_idx=2 loads records 2.. as its list: record 2 is its i = 0.
    visible = RAW_SECTORS[:n_valid]
    spec = EpisodeSpec(views=ring(traps=set(RAW_SECTORS) - set(visible)))
    env, _ = make_env(spec, copies=5, seed_policy="seed_plus_slice_index")
    whole, _ = make_env(spec, copies=5, seed_policy="seed_plus_index")
    for index in range(2, 5):
        obs = env.reset(index, slice_start=2)
        assert obs.episode_seed == 42 + index - 2
        assert obs.current_sector == GOLDEN_START[42 + index - 2][n_valid - 1]
        assert obs.current_sector == whole.reset(index - 2).current_sector  # = the whole index from 0
    assert env.reset(3).episode_seed == 45  # slice start 0: the same as seed_plus_index
    assert whole.reset(3, slice_start=2).episode_seed == 45  # the other policies ignore the slice


def test_seed_plus_slice_index_refuses_an_episode_before_the_slice(make_env):
    env, _ = make_env(copies=3, seed_policy="seed_plus_slice_index")
    with pytest.raises(ValueError, match="outside a slice starting at 2"):
        env.reset(1, slice_start=2)


def test_seed_policies_are_named_and_validated(make_env):
    assert SEED_POLICIES == ("per_episode_fixed", "seed_plus_index", "seed_plus_slice_index")
    with pytest.raises(ValueError, match="seed_policy"):
        make_env(seed_policy="random")


def test_valid_start_uses_the_shown_far_capture_not_any_view(make_env):
    # Every near view is visible, but only sector 10's far view: the index's valid_start_sectors would list
    # all six sectors, the environment only virtual sector 5.
    spec = EpisodeSpec(views=ring(far_traps={0, 2, 4, 6, 8}))
    env, _ = make_env(spec, copies=4, seed_policy="seed_plus_index")
    assert {env.reset(i).current_sector for i in range(4)} == {5}
    near_env, _ = make_env(spec, copies=1, view_priority="near")
    assert near_env.reset(0).current_sector == 3  # all six valid -> element 3


def test_without_visible_sector_every_available_sector_is_a_valid_start(make_env):
    env, _ = make_env(EpisodeSpec(views=ring(traps=set(RAW_SECTORS))))
    assert env.reset(0).current_sector == 3  # n = 6 -> element 3


# --- §3.5/§3.6 steps and directions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("direction", "virtual", "raw"),
    [
        ("front", 3, 6),
        ("front-left", 4, 8),
        ("back-left", 5, 10),
        ("back", 0, 0),
        ("back-right", 1, 2),
        ("front-right", 2, 4),
    ],
)
def test_each_relative_direction_lands_on_raw_sector_s_plus_2k(make_env, direction, virtual, raw):
    env, _ = make_env(only_visible(6))
    assert env.reset(0).current_sector == 3
    obs, reward, done, info = env.step(Action.move(direction))
    assert (obs.current_sector, info.to_sector) == (virtual, virtual)
    assert env.sector_map.captures[env.sector_map.capture_for(virtual)].sector_index == raw
    assert obs.rgb_path.endswith(f"rgb_s{raw}_far.png")
    assert reward == 0.0 and not done
    assert obs.step_count == 1
    if direction == "front":
        assert info.outcome is MoveOutcome.STAYED and not info.trap_view
    else:
        assert info.outcome is MoveOutcome.MOVED
        assert info.trap_view  # every other sector is a trap in this episode
        assert info.visibility_warning == TRAP_WARNING
    assert not info.navigation_failed and not obs.navigation_failed


def test_front_left_is_plus_60_degrees_of_azimuth(make_env):
    env, _ = make_env(only_visible(0))
    env.reset(0)
    smap = env.sector_map
    before = smap.captures[smap.capture_for(0)].camera_position
    env.step(Action.move("front-left"))
    after = smap.captures[smap.capture_for(env.current_sector)].camera_position
    theta = [math.degrees(math.atan2(p[2] - GOAL[2], p[0] - GOAL[0])) for p in (before, after)]
    assert theta[1] - theta[0] == pytest.approx(60.0)


def test_strict_30_degree_predicate():
    assert within_sector(math.radians(29.999))
    assert not within_sector(math.pi / 6)  # exactly 30 degrees is rejected
    assert not within_sector(-math.pi / 6)
    assert wrap_angle(math.pi) == -math.pi and wrap_angle(3 * math.pi / 2) == pytest.approx(-math.pi / 2)


def _two_view_episode(second_angle: float) -> EpisodeSpec:
    r = 1.5
    start = View(0, "far", position=[GOAL[0] + r, GOAL[1], GOAL[2]])  # theta = 0 exactly
    theta = math.radians(second_angle)
    other = View(
        4,
        "far",
        visible=False,
        position=[GOAL[0] + r * math.cos(theta), GOAL[1], GOAL[2] + r * math.sin(theta)],
    )
    return EpisodeSpec(views=[start, other])


@pytest.mark.parametrize(
    ("direction", "angle", "accepted"),
    [
        ("front-left", 89.5, True),  # aims at 60 deg: 29.5 deg off
        ("front-left", 90.5, False),  # 30.5 deg off
        ("back", 150.5, True),  # aims at 180 deg
        ("back", 149.5, False),
        ("back", 209.5, True),
        ("back", 210.5, False),
    ],
)
def test_move_accepts_candidates_strictly_within_30_degrees(make_env, direction, angle, accepted):
    env, _ = make_env(_two_view_episode(angle))
    env.reset(0)
    assert env.observe().rgb_path.endswith("rgb_s0_far.png")  # the start is the theta = 0 view
    _, _, _, info = env.step(Action.move(direction))
    assert info.outcome is (MoveOutcome.MOVED if accepted else MoveOutcome.UNREACHABLE)


def test_capture_exactly_30_degrees_off_is_rejected(make_env):
    # theta = 0 and theta = 90 deg are exact in floating point; front-left aims at 60 deg -> 30 deg off.
    env, _ = make_env(_two_view_episode(90.0))
    env.reset(0)
    _, _, _, info = env.step(Action.move("front-left"))
    assert info.outcome is MoveOutcome.UNREACHABLE
    assert info.visibility_warning == "Sector front-left is unreachable; the agent has not moved."


def test_nominal_30_degree_boundary_follows_reference_float_rounding(make_env):
    # back-left aims at 120 deg; the same capture at 90 deg is nominally 30 deg off, but the reference's
    # arithmetic yields |delta| one ulp below pi/6, so it is accepted. Pinned for parity with the reference.
    env, _ = make_env(_two_view_episode(90.0))
    env.reset(0)
    _, _, _, info = env.step(Action.move("back-left"))
    assert info.outcome is MoveOutcome.MOVED and info.to_sector == 2


def test_move_to_visited_sector_fails_as_already_visited(make_env):
    env, _ = make_env(only_visible(6))
    env.reset(0)
    env.step(Action.move("front-left"))  # v3 -> v4
    obs, _, done, info = env.step(Action.move("front-right (MLLM-Reasoning)"))  # back to v3: visited
    assert info.outcome is MoveOutcome.ALREADY_VISITED
    assert info.navigation_failed and not done
    assert info.target_sector == 3
    assert obs.current_sector == 4 and obs.navigation_failed
    assert obs.failed_direction == "front-right"
    assert info.visibility_warning == "Sector front-right was already visited; the agent has not moved."
    assert info.to_reference_dict() == {"navigation_failed": True, "decision": "Unsure"}


def test_move_to_sector_without_navigable_view_fails_as_unreachable(make_env):
    env, _ = make_env(EpisodeSpec(views=ring(unreachable={8}, traps={0, 2, 4, 10})))
    assert env.reset(0).current_sector == 3  # only raw 6 is a valid start
    obs, _, _, info = env.step(Action.move("Front-Left (MLLM-Reasoning)"))
    assert info.outcome is MoveOutcome.UNREACHABLE and info.navigation_failed
    assert obs.failed_direction == "Front-Left"  # cleaned, case kept (reference)
    assert obs.rgb_path.endswith("rgb_s6_far.png")  # same image again
    assert 4 not in env.visited_sectors


def test_failure_flags_persist_until_a_successful_move(make_env):
    env, _ = make_env(EpisodeSpec(views=ring(unreachable={8}, traps={0, 2, 4, 10})))
    env.reset(0)
    env.step(Action.move("front-left"))  # unreachable
    obs, _, _, _ = env.step(Action.move("front"))
    assert not obs.navigation_failed and obs.failed_direction is None  # "front" is a success
    env.step(Action.move("front-left"))
    obs, _, done, info = env.step(Action.yes())
    assert done and info.outcome is MoveOutcome.DECIDED
    assert obs.navigation_failed and obs.failed_direction == "front-left"  # a decision does not clear them


def test_front_stays_consumes_a_step_and_reraises_the_trap_flag(make_env):
    env, _ = make_env(EpisodeSpec(views=ring(traps=set(RAW_SECTORS))))
    start = env.reset(0).current_sector
    for step in (1, 2):
        obs, _, _, info = env.step(Action.move("front"))
        assert info.outcome is MoveOutcome.STAYED and obs.current_sector == start
        assert info.trap_view and not info.navigation_failed
        assert obs.step_count == step
        assert info.to_reference_dict() == {"trap_view": True, "decision": "Unsure"}


def test_trap_flag_only_on_arrival_at_a_trap_view(make_env):
    env, _ = make_env(EpisodeSpec(views=ring(traps={8})), seed_policy="per_episode_fixed")
    assert env.reset(0).current_sector == 3
    _, _, _, to_trap = env.step(Action.move("front-left"))
    _, _, _, to_visible = env.step(Action.move("front-left"))
    assert to_trap.trap_view and not to_visible.trap_view


def test_every_step_counts_and_the_horizon_forces_an_unsure_stop(make_env):
    env, _ = make_env(EpisodeSpec(views=ring(unreachable={8}, traps={0, 2, 4, 10})), max_steps=4)
    env.reset(0)
    outcomes = []
    for direction in ("front-left", "front", "back"):  # failure, stay, move: all cost a step
        obs, _, done, info = env.step(Action.move(direction))
        outcomes.append(info.outcome)
        assert not done
    assert outcomes == [MoveOutcome.UNREACHABLE, MoveOutcome.STAYED, MoveOutcome.MOVED]
    assert obs.step_count == 3
    sector = obs.current_sector
    obs, _, done, info = env.step(Action.move("front-right"))
    assert done and info.decision == "Unsure" and info.forced_stop
    assert info.outcome is MoveOutcome.REJECTED
    assert obs.current_sector == sector and obs.step_count == 4  # no move on the forced stop
    with pytest.raises(EpisodeFinishedError):
        env.step(Action.no())


def test_single_view_budget_stops_an_unsure_first_step(make_env):
    env, _ = make_env(max_steps=1)
    env.reset(0)
    _, _, done, info = env.step(Action.move("back"))
    assert done and info.outcome is MoveOutcome.REJECTED and info.step == 1


@pytest.mark.parametrize("decision", ["Yes", "No"])
def test_yes_or_no_ends_the_episode_with_that_decision(make_env, decision):
    env, _ = make_env()
    first = env.reset(0)
    obs, reward, done, info = env.step({"decision": decision, "nav_rel": "back", "_debug": "ignored"})
    assert done and reward == 0.0 and info.decision == decision
    assert info.outcome is MoveOutcome.DECIDED
    assert obs.current_sector == first.current_sector and obs.step_count == 1
    assert env.history == (info,)


def test_misuse_raises_clear_errors(make_env):
    env, _ = make_env()
    with pytest.raises(EpisodeNotStartedError):
        env.step(Action.yes())
    with pytest.raises(IndexError, match="out of range"):
        env.reset(5)
    env.reset(0)
    with pytest.raises(InvalidActionError):
        env.step("Yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidActionError):
        env.step(Action(decision=None))  # type: ignore[arg-type]
    assert env.step_count == 0  # rejected actions do not consume budget
    env.step(Action.no())
    with pytest.raises(EpisodeFinishedError, match="reset"):
        env.step(Action.yes())
    assert env.reset(0).step_count == 0  # a new episode can start


def test_unknown_direction_defaults_to_front_like_the_reference(make_env):
    env, _ = make_env()
    start = env.reset(0).current_sector
    obs, _, _, info = env.step(Action.move("sideways please"))
    assert info.direction == "front" and info.outcome is MoveOutcome.STAYED
    assert obs.current_sector == start
    obs, _, _, info = env.step({"decision": "maybe", "nav_rel": "go back-left now"})
    assert info.decision == "Unsure" and info.direction == "back-left"


def test_strict_directions_reject_malformed_actions_without_consuming_a_step(make_env):
    env, _ = make_env(strict_directions=True)
    env.reset(0)
    for bad in (
        Action.move("sideways"),
        Action.move("go back"),
        Action("maybe", "back"),
        Action("Unsure", None),
    ):
        with pytest.raises(InvalidActionError):
            env.step(bad)
    assert env.step_count == 0
    _, _, _, info = env.step(Action.move("Back-Left (MLLM-Reasoning)"))  # exact after cleaning: accepted
    assert info.direction == "back-left"


# --- §3.4 observation, ground truth and privileged channel -------------------------------------------------

GT_FIELDS = {"label", "pair_type", "query_object_id", "target_object_id", "query_object_category", "meta"}


def test_observation_carries_no_ground_truth_by_default(make_env):
    env, _ = make_env()
    obs = env.reset(0)
    names = {f.name for f in dataclasses.fields(Observation)}
    assert not names & GT_FIELDS
    assert obs.privileged is None
    env.step(Action.move("back"))
    assert env.observe().privileged is None
    assert env.ground_truth.label == 1 and env.ground_truth.pair_type == "positive"  # for the evaluator


def test_privileged_observation_exposes_gt_box_flags_and_labels(make_env):
    env, episode = make_env(EpisodeSpec(views=ring(traps={8})), privileged=True)
    obs = env.reset(0)
    priv = obs.privileged
    assert priv is not None
    record = next(v for v in episode.meta["viewpoints"] if v["tag"] == priv.capture_tag)
    assert priv.capture_tag == "s6_far" and priv.raw_sector == 6 and priv.view_type == "far"
    assert list(priv.mask_bbox_xyxy) == record["mask_bbox_xyxy"]
    assert priv.mask_area_px == record["mask_area_px"] and priv.mask_meets_threshold
    assert priv.truth.label == 1 and priv.truth.query_object_id == episode.object_id
    assert [v.tag for v in priv.viewpoints] == [v["tag"] for v in episode.meta["viewpoints"]]
    obs, _, _, _ = env.step(Action.move("front-left"))
    assert obs.privileged.trap_view and obs.privileged.visited_visibility == {3: True, 4: False}


def test_observation_fields_and_lazy_image(make_env, tiny):
    tiny.add_object("mug_a", "mug")
    tiny.write_descriptions()
    env, episode = make_env(only_visible(4), descriptions=PInVerifyDataset(tiny.root).load_descriptions())
    obs = env.reset(0)
    assert obs.step_count == 0 and obs.max_steps == 6 and obs.remaining_steps == 6
    assert obs.available_sectors == (0, 1, 2, 3, 4, 5)
    assert not obs.navigation_failed and obs.failed_direction is None
    assert obs.rgb_path == str(tiny.root.absolute() / episode.episode_path / "rgb" / "rgb_s4_far.png")
    pixels = obs.load_image()
    assert pixels.shape == (64, 36, 3) and pixels.dtype == np.uint8
    assert tuple(pixels[0, 0]) == image_color(4, "far")
    assert obs.query_descriptions == tuple(tiny.descriptions_of("mug_a", "mug"))
    assert obs.camera_intrinsics.width == 36 and obs.camera_intrinsics.hfov_deg == 42.0


def test_v1_captures_and_rgb_filename_alias_drive_the_same_episode(make_env):
    env, _ = make_env(EpisodeSpec(views=ring(traps={8}), list_key="captures", rgb_key="rgb_filename"))
    assert env.reset(0).current_sector == 3
    obs, _, _, info = env.step(Action.move("front-left"))
    assert info.trap_view and obs.rgb_path.endswith("rgb_s8_far.png")


def test_reset_reports_broken_episode_and_environment_stays_usable(tiny):
    good = tiny.add_episode(EpisodeSpec(episode="0"))
    bad = tiny.add_episode(
        EpisodeSpec(episode="1", meta_overrides={"goal_position_nominal": [1.0, float("nan"), 2.0]})
    )
    records = [parse_pair_record(tiny.pair(ep), Where.of("t")) for ep in (bad, good)]
    env = PInVerifyEnv(records, PInVerifyDataset(tiny.root))
    with pytest.raises(DatasetError, match=r"goal_position_nominal\[1\]'.*NaN"):
        env.reset(0)
    with pytest.raises(EpisodeNotStartedError):
        env.step(Action.yes())
    assert env.reset(1).current_sector == 3


def test_missing_meta_falls_back_to_scanning_the_rgb_directory(make_env):
    env, episode = make_env()
    (episode.directory / "meta.json").unlink()
    obs = env.reset(0)
    # No coordinates: the sector map stays empty, the agent sees the first file and every move fails.
    assert obs.available_sectors == () and obs.rgb_path.endswith("rgb_s0_far.png")
    _, _, _, info = env.step(Action.move("front-left"))
    assert info.navigation_failed


def test_seed_global_rngs_reseeds_python_and_numpy(make_env):
    env, _ = make_env(copies=3, seed_policy="seed_plus_index", seed_global_rngs=True)
    env.reset(2)
    assert random.random() == random.Random(44).random()
    assert np.random.rand() == np.random.RandomState(44).rand()
