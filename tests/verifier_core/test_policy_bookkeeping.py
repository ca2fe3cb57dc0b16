"""Per-step policy bookkeeping (spec §5.9) and its interplay with the tracker and NBV."""

import pytest
from aiv_dataset.vocabulary import relative_direction, target_sector
from aiv_verifier.core.nbv import NbvRequest, RandomNbv
from aiv_verifier.core.policy_bookkeeping import EpisodeBookkeeping
from aiv_verifier.core.tracker import AttributeStateTracker
from aiv_verifier.core.types import AttributeState


def test_first_step_marks_the_start_sector_visited():
    book = EpisodeBookkeeping()
    step = book.begin_step(current_sector=4, navigation_failed=False, target_visible=True)
    assert (step.current_sector, step.view_id, step.is_duplicate, step.newly_failed) == (4, 0, False, None)
    assert book.visited == {4} and book.failed == frozenset()
    assert dict(book.sector_visibility) == {4: True}


def test_failed_move_charges_the_pending_target_and_marks_a_duplicate():
    book = EpisodeBookkeeping()
    book.begin_step(0, navigation_failed=False, target_visible=True)
    book.set_pending_move(3, "back")
    step = book.begin_step(0, navigation_failed=True, target_visible=True)
    assert step.is_duplicate and step.newly_failed == 3 and step.failed_direction == "back"
    assert step.view_id == 0  # same image as before
    assert book.failed == {3} and book.visited == {0, 3}
    assert book.pending_target is None
    # NBV can no longer pick the refused sector.
    for index in range(20):
        request = NbvRequest(f"ep{index}", 2, 0, book.visited, book.failed)
        assert RandomNbv().choose(request).target_index in {1, 2, 4, 5}


def test_successful_move_is_a_new_view_and_clears_the_pending_target():
    book = EpisodeBookkeeping()
    book.begin_step(1, navigation_failed=False)
    book.set_pending_move(target_sector(1, "front-left"), "front-left")
    step = book.begin_step(2, navigation_failed=False, target_visible=False)
    assert (step.view_id, step.is_duplicate, step.newly_failed, step.failed_direction) == (
        1,
        False,
        None,
        None,
    )
    assert book.visited == {1, 2} and book.failed == frozenset()
    assert dict(book.sector_visibility) == {2: False}  # no flag was given for sector 1


def test_duplicate_steps_do_not_reach_the_tracker_in_a_short_episode():
    """Mini episode: view, refused move, new view; the tracker sees exactly two distinct views."""
    book = EpisodeBookkeeping()
    tracker = AttributeStateTracker(["color"])
    script = [
        (0, False, AttributeState.MATCHED),
        (0, True, AttributeState.MATCHED),  # refused move: same image again
        (5, False, AttributeState.CONTRADICTED),
    ]
    pending = [3, 5, None]
    for (sector, failed, state), target in zip(script, pending, strict=True):
        step = book.begin_step(sector, navigation_failed=failed)
        if not step.is_duplicate:
            tracker.update(step.view_id, {"color": state}, 0.8)
        if target is not None:
            book.set_pending_move(target, relative_direction(sector, target))
    assert [(o.view_id, o.state) for o in tracker.history("color")] == [
        (0, AttributeState.MATCHED),
        (1, AttributeState.CONTRADICTED),
    ]
    assert book.failed == {3}


def test_out_of_range_sectors_are_refused():
    book = EpisodeBookkeeping()
    with pytest.raises(ValueError):
        book.begin_step(6, navigation_failed=False)
    with pytest.raises(ValueError):
        book.set_pending_move(-1, "front")
