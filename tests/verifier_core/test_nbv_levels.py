"""Next-best-view over (sector, level) views: candidates, each strategy with height levels, one-level golden.

The layout is synthetic (no dataset): six sectors around a goal at 0.5 m, each seen from three camera heights
(0.8 m below, 1.31 m eye level, 1.9 m above) at 1.5 m.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from aiv_verifier.core.evidence import AnswerCounts, ReliabilityCell, ReliabilityTable, TargetModel
from aiv_verifier.core.evidential import ClaimAnswer, ClaimItem, EvidenceLedger
from aiv_verifier.core.nbv import FarthestNbv, LlmNbv, NbvRequest, RandomNbv
from aiv_verifier.core.nbv_prompt import parse_direction_response
from aiv_verifier.core.nbv_uncertainty import UncertaintyNbv
from aiv_verifier.core.policy_bookkeeping import EpisodeBookkeeping
from aiv_verifier.core.sector_geometry import SectorCapture, SectorGeometry, sector_azimuths
from aiv_verifier.core.types import Decision
from aiv_verifier.core.view_sphere import candidate_views, move_to
from aiv_verifier.core.visibility import VisibilityCount, VisibilityModel, vertical_hint

from .one_level_golden import FIXTURE, answers, core_modules

GOAL = (0.0, 0.5, 0.0)
HEIGHTS = {-1: 0.8, 0: 1.31, 1: 1.9}
LEVELS = (-1, 0, 1)


def capture(sector: int, level: int, view_type: str = "far") -> SectorCapture:
    angle = math.radians(60.0 * sector)
    position = (1.5 * math.cos(angle), HEIGHTS[level], 1.5 * math.sin(angle))
    return SectorCapture(sector, view_type, position, level)


TOWER = SectorGeometry.from_records([capture(k, level) for level in (0, 1, -1) for k in range(6)], GOAL)


def request(
    current: tuple[int, int],
    visited: set[tuple[int, int]],
    failed: set[tuple[int, int]] = frozenset(),  # type: ignore[assignment]
    geometry: SectorGeometry | None = TOWER,
    levels: tuple[int, ...] = LEVELS,
    **extra,
) -> NbvRequest:
    views = frozenset(visited | {current} | set(failed))
    return NbvRequest(
        episode_key="scene/ep3",
        step=len(views),
        current_sector=current[0],
        visited=frozenset(sector for sector, level in views if level == current[1]),
        failed=frozenset(sector for sector, level in failed if level == current[1]),
        geometry=geometry,
        current_level=current[1],
        levels=levels,
        visited_views=views,
        failed_views=frozenset(failed),
        **extra,
    )


# ---- candidates ------------------------------------------------------------------------------------------


def test_candidates_are_the_planar_moves_at_this_level_then_up_and_down_here() -> None:
    assert candidate_views((2, 0), LEVELS, {(2, 0)}) == [
        (0, 0),
        (1, 0),
        (3, 0),
        (4, 0),
        (5, 0),
        (2, 1),
        (2, -1),
    ]
    # At the top level there is no "up"; used views are never candidates, at any level.
    assert candidate_views((2, 1), LEVELS, {(2, 1), (2, 0), (4, 1)}) == [(0, 1), (1, 1), (3, 1), (5, 1)]
    assert move_to((2, 0), (2, 1)) == "up" and move_to((2, 0), (2, -1)) == "down"
    assert move_to((2, 1), (5, 1)) == "back"
    with pytest.raises(ValueError, match="keeps the level"):
        move_to((2, 1), (5, 0))


def test_the_sector_azimuths_come_from_eye_level_views_only() -> None:
    tilted = SectorGeometry.from_records(
        [capture(0, 1), *[capture(k, 0) for k in range(6)]], GOAL
    )  # the first listed capture is above; the reference angle is still the eye-level one
    assert sector_azimuths(tilted) == sector_azimuths(
        SectorGeometry.from_records([capture(k, 0) for k in range(6)], GOAL)
    )


# ---- random ----------------------------------------------------------------------------------------------


def test_random_draws_uniformly_among_unused_views_one_move_away() -> None:
    picks = set()
    for index in range(60):
        choice = RandomNbv(base_seed=index).choose(request((0, 0), {(3, 0)}, {(0, -1)}))
        assert (choice.target_index, choice.target_level) in {(1, 0), (2, 0), (4, 0), (5, 0), (0, 1)}
        assert choice.direction == move_to((0, 0), choice.target_view)
        picks.add(choice.direction)
    assert "up" in picks and "down" not in picks  # the view below was refused
    again = RandomNbv(base_seed=7).choose(request((0, 0), {(3, 0)}))
    assert again == RandomNbv(base_seed=7).choose(request((0, 0), {(3, 0)}))


def test_with_every_neighbour_used_a_random_neighbour_is_the_last_resort() -> None:
    used = {(k, 0) for k in range(6)} | {(0, 1), (0, -1)}
    choice = RandomNbv().choose(request((0, 0), used))
    assert choice.debug["fallback"] == "random_non_current"
    assert choice.target_view in {(k, 0) for k in range(1, 6)} | {(0, 1), (0, -1)}


# ---- farthest point sampling on the view sphere ----------------------------------------------------------


def test_fps_goes_round_first_and_up_or_down_once_the_ring_is_seen() -> None:
    first = FarthestNbv().choose(request((0, 0), set()))
    assert (first.direction, first.target_view) == ("back", (3, 0))  # 180 deg round beats 15 deg up
    eye_ring = {(k, 0) for k in range(6)}
    vertical = FarthestNbv().choose(request((3, 0), eye_ring))
    assert vertical.direction in ("up", "down")
    scores = vertical.debug["scores_deg"]
    # Above (1.9 m) is 43 deg up, eye level 28 deg, below 11 deg: the bigger gap wins.
    elevation = {level: math.degrees(math.atan2(HEIGHTS[level] - 0.5, 1.5)) for level in LEVELS}
    assert scores["3/1"] == pytest.approx(elevation[1] - elevation[0], abs=1e-3)
    assert scores["3/-1"] == pytest.approx(elevation[0] - elevation[-1], abs=1e-3)
    assert vertical.direction == ("up" if scores["3/1"] > scores["3/-1"] else "down")


def test_fps_scores_a_view_without_its_own_capture_at_its_levels_mean_elevation() -> None:
    partial = SectorGeometry.from_records(
        [*(capture(k, 0) for k in range(6)), capture(1, 1)], GOAL
    )  # only sector 1 was captured from above
    choice = FarthestNbv().choose(request((4, 0), {(k, 0) for k in range(6)}, geometry=partial))
    assert choice.target_view == (4, 1)
    assert choice.debug["scores_deg"]["4/1"] > 10.0  # the synthetic point sits at level 1's elevation


def test_fps_without_coordinates_draws_among_unused_views() -> None:
    choice = FarthestNbv().choose(request((0, 0), set(), geometry=None))
    assert choice.debug["fallback"] == "random_unvisited"


# ---- uncertainty NBV with the visibility model by level ---------------------------------------------------

RELIABLE = ReliabilityCell(AnswerCounts(900, 10, 90), AnswerCounts(10, 900, 90))
TABLE = ReliabilityTable({(kind, "large"): RELIABLE for kind in ("main_colour", "part_colour")})
MODEL = TargetModel(1 / 3, 0.5, 0.0, 0.2)
#: Eye-level rows: a part colour shows from half the views wherever it is.
EYE_ROWS = {
    ("part_colour", "sided", view_type, distance): VisibilityCount(50, 100)
    for view_type in ("far", "near")
    for distance in ("any", "60", "120", "180")
}
#: Rows by level: a claim on top shows from above 9 times in 10, from below hardly; one underneath the reverse.
LEVEL_ROWS = {
    ("part_colour", vertical, level, "far", distance): VisibilityCount(visible, 100)
    for distance in ("any", "same", "60", "120", "180")
    for vertical, level, visible in (
        ("top", 1, 90),
        ("top", -1, 3),
        ("top", 0, 20),
        ("bottom", 1, 3),
        ("bottom", -1, 85),
        ("bottom", 0, 15),
    )
}
BY_LEVEL = VisibilityModel(EYE_ROWS, LEVEL_ROWS)


def ledger_with(phrase: str) -> EvidenceLedger:
    ledger = EvidenceLedger([ClaimItem("part", "part_colour", "sided", vertical_hint(phrase))], TABLE, MODEL)
    ledger.record((0, "s0_far"), [ClaimAnswer("part", Decision.UNSURE)], quality="large")
    return ledger


@pytest.mark.parametrize(("phrase", "move"), [("a red lid on top", "up"), ("black soles underneath", "down")])
def test_uncertainty_looks_from_above_for_a_lid_and_from_below_for_a_sole(phrase: str, move: str) -> None:
    choice = UncertaintyNbv(BY_LEVEL).choose(request((0, 0), set(), evidence=ledger_with(phrase)))
    assert choice.direction == move
    gains = choice.debug["gains"]
    assert max(gains, key=gains.get) == f"{choice.target_index}/{choice.target_level}"


def test_uncertainty_without_rows_by_level_uses_the_eye_level_answer_for_every_level() -> None:
    eye_only = VisibilityModel(EYE_ROWS)
    assert eye_only.level_probability("part_colour", "sided", "top", 1, "far", "same", "60") == pytest.approx(
        eye_only.probability("part_colour", "sided", "far", "60")
    )
    choice = UncertaintyNbv(eye_only).choose(request((0, 0), set(), evidence=ledger_with("a red lid on top")))
    assert choice.target_level == 0  # equal gains: FPS order decides, and round the ring is the bigger gap


def test_an_evidence_pose_at_another_level_counts_as_that_view() -> None:
    ledger = ledger_with("a red lid on top")
    ledger.record((0, "s0_far_above", 1), [ClaimAnswer("part", Decision.UNSURE)], quality="large")
    choice = UncertaintyNbv(BY_LEVEL).choose(request((0, 1), {(0, 0)}, evidence=ledger))
    assert choice.target_level == 1  # up here missed it, but another side from above is still the best bet


def test_vertical_hints_read_the_phrase() -> None:
    assert vertical_hint("a brown lid") == "top" and vertical_hint("printed on top") == "top"
    assert vertical_hint("white rubber soles") == "bottom" and vertical_hint("a blue base") == "bottom"
    assert vertical_hint("navy blue") == "none" and vertical_hint("top and bottom stripes") == "none"


# ---- LLM NBV -------------------------------------------------------------------------------------------


class Scripted:
    def __init__(self, answer: str) -> None:
        self.answer, self.prompts = answer, []

    def generate(self, prompt: str, images) -> str:
        self.prompts.append(prompt)
        return json.dumps({"chosen_direction": self.answer})


SCENE = np.zeros((8, 8, 3), dtype=np.uint8)


@pytest.mark.parametrize("answer", ["up", "move_up", "Move Up"])
def test_llm_offers_up_and_down_with_levels_and_reads_them_back(answer: str) -> None:
    model = Scripted(answer)
    choice = LlmNbv(model).choose(request((2, 0), {(5, 0)}, scene_image=SCENE, descriptions=("a pot",)))
    assert (choice.direction, choice.target_view, choice.debug["fallback"]) == ("up", (2, 1), False)
    prompt = model.prompts[0]
    assert (
        "Directions you may choose: ['front-left', 'front-right', 'back-left', 'back-right', 'up', 'down']"
        in prompt
    )
    assert "- up: stay on this side and raise the camera" in prompt and "- down: " in prompt
    assert "Camera height: eye level (this place has views at: below, eye, above)" in prompt
    assert "Directions already used: ['front', 'back']" in prompt


def test_llm_names_visited_views_at_other_heights_and_stops_offering_a_used_one() -> None:
    model = Scripted("down")
    choice = LlmNbv(model).choose(request((2, 1), {(2, 0)}, {(2, 0)}, scene_image=SCENE))
    assert (
        choice.debug["fallback"] is True and choice.direction != "down"
    )  # no level below "above"'s eye view
    prompt = model.prompts[0]
    assert (
        "'front (eye)'" in prompt
        and "'down'" not in prompt.split("Directions you may choose:")[1].split("\n")[0]
    )


def test_height_words_are_read_only_in_an_episode_with_levels() -> None:
    assert parse_direction_response('{"chosen_direction": "up"}').canonical is None
    assert parse_direction_response('{"chosen_direction": "up"}', height_moves=True).canonical == "up"
    assert parse_direction_response('{"chosen_direction": "back-up"}', height_moves=True).canonical == "back"


# ---- bookkeeping over views --------------------------------------------------------------------------------


def test_bookkeeping_keeps_views_and_judges_planar_moves_at_the_current_level() -> None:
    book = EpisodeBookkeeping()
    book.begin_step(0, navigation_failed=False, target_visible=True)
    book.set_pending_move(0, "up", 1)
    book.begin_step(0, navigation_failed=False, target_visible=False, current_level=1)
    assert book.visited_views == {(0, 0), (0, 1)} and book.visited == {0}
    assert dict(book.view_visibility) == {(0, 0): True, (0, 1): False}
    assert dict(book.sector_visibility) == {0: False}  # the current level's flags
    book.set_pending_move(3, "back")
    step = book.begin_step(0, navigation_failed=True, current_level=1)
    assert (step.newly_failed, step.newly_failed_level) == (3, 1)
    assert book.failed_views == {(3, 1)} and book.failed == {3}
    book.set_pending_move(0, "down", 0)
    book.begin_step(0, navigation_failed=False, current_level=0)
    assert book.visited == {0} and book.failed == frozenset()  # the refusal was at level 1


# ---- one level: today's answers, bit for bit ---------------------------------------------------------------


def test_one_level_requests_get_the_answers_of_the_code_before_levels() -> None:
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    got = answers(core_modules())
    assert len(got) == len(expected)
    wrong = [
        (want["case"], want["move"], have["move"])
        for want, have in zip(expected, got, strict=True)
        if want != have
    ]
    assert not wrong, f"{len(wrong)} one-level answers changed, e.g. {wrong[:3]}"


def test_an_eye_level_geometry_with_levels_listed_once_is_a_one_level_request() -> None:
    ring = SectorGeometry.from_records([capture(k, 0) for k in range(6)], GOAL)
    plain = NbvRequest("scene/ep3", 2, 1, frozenset({1, 4}), geometry=ring)
    explicit = NbvRequest(
        "scene/ep3",
        2,
        1,
        frozenset({1, 4}),
        geometry=ring,
        levels=(0,),
        visited_views=frozenset({(1, 0), (4, 0)}),
    )
    for strategy in (RandomNbv(), FarthestNbv()):
        assert strategy.choose(plain) == strategy.choose(explicit)
