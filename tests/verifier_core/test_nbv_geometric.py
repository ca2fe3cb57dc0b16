"""Random and angular-FPS next-best-view (spec §5.10) on hand-made geometry."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import aiv_dataset
import aiv_verifier
import pytest
from aiv_verifier.core.nbv import FarthestNbv, NbvRequest, RandomNbv, available_nbv_strategies, make_nbv
from aiv_verifier.core.sector_geometry import SectorCapture, SectorGeometry, sector_azimuths, shortest_arc

GOAL = (1.0, 0.5, -2.0)


def at(sector: int, degrees: float, radius: float = 1.5, view_type: str = "far") -> SectorCapture:
    """A capture at ``degrees`` azimuth around GOAL (θ measured from +x towards +z)."""
    angle = math.radians(degrees)
    position = (GOAL[0] + radius * math.cos(angle), 1.31, GOAL[2] + radius * math.sin(angle))
    return SectorCapture(sector, view_type, position)


def ring(*captures: SectorCapture) -> SectorGeometry:
    return SectorGeometry.from_records(captures, GOAL)


def request(current: int, visited, failed=(), geometry=None, key="scene/ep7", step=1) -> NbvRequest:
    return NbvRequest(
        episode_key=key,
        step=step,
        current_sector=current,
        visited=frozenset(visited),
        failed=frozenset(failed),
        geometry=geometry,
    )


FULL_RING = ring(*(at(k, 60.0 * k) for k in range(6)))


def test_registry_builds_strategies_by_name():
    assert {"random", "farthest", "llm"} <= set(available_nbv_strategies())
    assert isinstance(make_nbv("farthest"), FarthestNbv)
    assert make_nbv("random", base_seed=7).base_seed == 7
    with pytest.raises(ValueError, match="farthest"):
        make_nbv("fps")


def test_shortest_arc_wraps_around():
    assert shortest_arc(math.radians(170), math.radians(-170)) == pytest.approx(math.radians(20))
    assert shortest_arc(0.0, math.radians(420)) == pytest.approx(math.radians(60))


def test_fps_from_one_view_goes_to_the_opposite_side():
    choice = FarthestNbv().choose(request(0, {0}, geometry=FULL_RING))
    assert (choice.direction, choice.target_index) == ("back", 3)
    assert choice.debug["scores_deg"][3] == pytest.approx(180.0)
    assert "180.0" in choice.reason


def test_fps_tie_goes_to_the_lowest_sector():
    # Axis-aligned cameras give exact azimuths 0, 90, 180, -90 deg, so sectors 1 and 5 tie exactly at 90 deg
    # from the visited {0, 3}; synthetic sectors 2 and 4 are only 60 deg away. The lower index wins.
    gx, gy, gz = GOAL
    geometry = ring(
        SectorCapture(0, "far", (gx + 1.5, gy, gz)),
        SectorCapture(1, "far", (gx, gy, gz + 1.5)),
        SectorCapture(3, "far", (gx - 1.5, gy, gz)),
        SectorCapture(5, "far", (gx, gy, gz - 1.5)),
    )
    choice = FarthestNbv().choose(request(3, {0, 3}, geometry=geometry))
    assert choice.debug["scores_deg"][1] == choice.debug["scores_deg"][5] == 90.0
    assert choice.target_index == 1
    assert choice.direction == "back-right"  # seen from sector 3
    # Remove sector 1 from the candidates and the tie partner 5 is chosen.
    assert FarthestNbv().choose(request(3, {0, 3}, failed={1}, geometry=geometry)).target_index == 5


def test_fps_counts_near_views_and_skips_failed_sectors():
    # Sector 3 has no capture (unreachable), so it sits at the synthetic 180 deg.
    geometry = ring(
        at(0, 0.0), at(0, 25.0, radius=1.0, view_type="near"), *(at(k, 60.0 * k) for k in (1, 2, 4, 5))
    )
    # Sector 3: min(180, 155) = 155 deg is best.
    assert FarthestNbv().choose(request(0, {0}, geometry=geometry)).target_index == 3
    # With 3 failed (bookkeeping also marks it visited, it adds no position): 1 -> 35, 2 -> 95, 4 -> 120,
    # 5 -> 60 deg; without the near view sectors 2 and 4 would tie at 120 and 2 would win.
    choice = FarthestNbv().choose(request(0, {0, 3}, failed={3}, geometry=geometry))
    assert choice.target_index == 4
    assert choice.debug["scores_deg"] == pytest.approx({1: 35.0, 2: 95.0, 4: 120.0, 5: 60.0})


def test_fps_places_sectors_without_captures_on_synthetic_positions_from_the_first_listed_capture():
    first_sector0 = ring(at(0, 10.0, radius=1.4), at(1, 80.0, radius=1.6))
    azimuths = sector_azimuths(first_sector0)
    assert azimuths is not None and azimuths.measured == {0, 1}
    assert azimuths.mean_radius == pytest.approx(1.5)
    assert math.degrees(azimuths.by_sector[4]) == pytest.approx(250.0 - 360.0)
    # Synthetic 130/190/250/310 deg vs visited {10, 80}: 50, 110, 120, 60 -> sector 4.
    assert FarthestNbv().choose(request(1, {0, 1}, geometry=first_sector0)).target_index == 4
    # Same captures listed the other way round: reference 80 deg, synthetic 200/260/320/20 -> sector 2.
    first_sector1 = ring(at(1, 80.0), at(0, 10.0))
    assert FarthestNbv().choose(request(1, {0, 1}, geometry=first_sector1)).target_index == 2


def test_fps_scores_a_candidate_by_its_first_listed_capture():
    # Sector 2 is listed far (100 deg) then near (150 deg); its position is the far one, so sector 4 (120 deg)
    # beats it. Taking the near view instead would make sector 2 win at 150 deg.
    geometry = ring(at(0, 0.0), at(2, 100.0), at(2, 150.0, radius=1.0, view_type="near"), at(4, 240.0))
    choice = FarthestNbv().choose(request(0, {0, 3}, failed={3}, geometry=geometry))
    assert choice.debug["scores_deg"] == pytest.approx({1: 60.0, 2: 100.0, 4: 120.0, 5: 60.0})
    assert choice.target_index == 4


def test_fps_without_coordinates_falls_back_to_a_seeded_unvisited_sector():
    blind = ring(SectorCapture(0, "far", None), SectorCapture(2, "far", None))
    choice = FarthestNbv().choose(request(0, {0, 1}, failed={1}, geometry=blind))
    assert choice.target_index in {2, 3, 4, 5}
    assert choice.debug["fallback"] == "random_unvisited"
    again = FarthestNbv().choose(request(0, {0, 1}, failed={1}, geometry=blind))
    assert again.target_index == choice.target_index
    assert FarthestNbv().choose(request(0, {0}, geometry=None)).debug["fallback"] == "random_unvisited"


@pytest.mark.parametrize("strategy", [FarthestNbv(), RandomNbv()])
def test_when_everything_is_used_up_any_non_current_sector_is_picked(strategy):
    choice = strategy.choose(request(2, set(range(6)), geometry=FULL_RING))
    assert choice.target_index != 2
    assert choice.debug["fallback"] == "random_non_current"


def test_random_picks_only_unvisited_non_failed_sectors_and_names_them_relatively():
    for index in range(30):
        choice = RandomNbv().choose(request(4, {4, 0}, failed={5}, key=f"scene/ep{index}"))
        assert choice.target_index in {1, 2, 3}
        assert choice.direction == {1: "back", 2: "back-right", 3: "front-right"}[choice.target_index]


def test_random_varies_with_episode_and_base_seed():
    picks = {RandomNbv().choose(request(0, {0}, key=f"ep{index}")).target_index for index in range(40)}
    assert len(picks) >= 3
    by_seed = {RandomNbv(base_seed=seed).choose(request(0, {0})).target_index for seed in range(40)}
    assert len(by_seed) >= 3


_CHILD = """
import json, sys
from aiv_verifier.core.nbv import NbvRequest, RandomNbv
keys = json.loads(sys.argv[1])
out = [RandomNbv().choose(NbvRequest(k, 1, 0, frozenset(range(n)))).target_index for k, n in keys]
print(json.dumps(out))
"""


def test_random_choices_are_identical_across_processes_with_different_hash_salts():
    cases = [(f"scene{index}/ep{index * 7}", 1 + index % 4) for index in range(25)]
    here = [RandomNbv().choose(NbvRequest(k, 1, 0, frozenset(range(n)))).target_index for k, n in cases]
    # The copies this process imported: the verifier and the benchmark vocabulary it takes sectors from.
    roots = [Path(package.__file__).resolve().parents[1] for package in (aiv_verifier, aiv_dataset)]
    outputs = []
    for salt in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": salt, "PYTHONPATH": os.pathsep.join(map(str, roots))}
        completed = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(cases)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(json.loads(completed.stdout))
    assert outputs[0] == here
    assert outputs[1] == here
