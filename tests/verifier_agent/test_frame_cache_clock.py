"""Which frame is "the newest" when stamps cannot be trusted: clock jumps, bag loops, a simulated clock.

A request without a start stamp gets the image that arrived last, unless its stamp is further ahead of the
reader's clock than the bound; such an image is counted, stays reachable by its exact stamp, and never hides
the frames that come after it.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from aiv_verifier.frame_cache import FrameCache, FrameTimeout, StampAhead

SECOND = 1_000_000_000
NOW = 1_000 * SECOND
BOUND = 5 * SECOND


class FakeClock:
    """A clock the test sets; None means "no time yet" (sim time before the first /clock message)."""

    def __init__(self, now: int | None = NOW) -> None:
        self.now = now

    def __call__(self) -> int | None:
        return self.now


def _image(value: int) -> np.ndarray:
    return np.full((4, 4, 3), value, dtype=np.uint8)


def _cache(clock: FakeClock, capacity: int = 8) -> FrameCache:
    return FrameCache(capacity, clock_ns=clock, max_ahead_ns=BOUND)


def test_a_frame_stamped_far_ahead_is_kept_by_stamp_but_never_becomes_the_newest() -> None:
    cache = _cache(FakeClock())
    assert cache.put_image(NOW - SECOND, _image(1)) is None
    jump = NOW + 3600 * SECOND  # the camera's clock jumped an hour ahead, once
    assert cache.put_image(jump, _image(2)) == StampAhead(jump, 3600 * SECOND)
    assert cache.wait(None, 0.01).stamp_ns == NOW - SECOND  # the jump is not the newest frame
    assert cache.wait(jump, 0.01).image[0, 0, 0] == 2  # but a request naming it gets it

    for offset in (1, 2):  # normal frames after the jump are served, although their stamps are smaller
        cache.put_image(NOW + offset * SECOND // 10, _image(10 + offset))
        assert cache.wait(None, 0.01).stamp_ns == NOW + offset * SECOND // 10
    assert cache.stamps_ahead == 1


def test_a_stamp_within_the_bound_is_taken_and_the_bound_is_against_the_current_clock() -> None:
    clock = FakeClock()
    cache = _cache(clock)
    assert cache.put_image(NOW + BOUND, _image(1)) is None  # exactly at the bound: plausible
    assert cache.wait(None, 0.01).stamp_ns == NOW + BOUND
    assert cache.put_image(NOW + BOUND + 1, _image(2)) is not None
    clock.now = NOW + 10 * SECOND  # the clock moved on: the same kind of stamp is plausible now
    assert cache.put_image(NOW + BOUND + 2, _image(3)) is None
    assert cache.wait(None, 0.01).stamp_ns == NOW + BOUND + 2


def test_stamps_going_backwards_still_serve_the_frames_that_arrive() -> None:
    clock = FakeClock()
    cache = _cache(clock)
    for stamp in (NOW - 3 * SECOND, NOW - 2 * SECOND, NOW - SECOND):
        cache.put_image(stamp, _image(1))
    clock.now = 50 * SECOND  # a bag starts over (sim time) or the clock was reset
    cache.put_image(49 * SECOND, _image(2))
    newest = cache.wait(None, 0.01)
    assert newest.stamp_ns == 49 * SECOND and newest.image[0, 0, 0] == 2
    cache.put_image(50 * SECOND, _image(3))
    clock.now = 50 * SECOND  # the bag loops again: its stamps repeat, and what arrived last counts
    cache.put_image(49 * SECOND, _image(4))
    newest = cache.wait(None, 0.01)
    assert newest.stamp_ns == 49 * SECOND and newest.image[0, 0, 0] == 4


def test_after_the_clock_goes_back_the_last_frame_of_the_old_timeline_is_not_the_newest() -> None:
    """A looped bag or a restarted simulation: a request that arrives before the first frame of the new timeline
    waits for it instead of judging the frame stamped before the restart (the CI race this fixes)."""
    clock = FakeClock()
    cache = _cache(clock)
    cache.put_image(NOW + 2 * SECOND, _image(1))  # plausible when it arrived
    assert cache.wait(None, 0.01).stamp_ns == NOW + 2 * SECOND
    clock.now = 20 * SECOND  # the clock restarts far behind that stamp
    with pytest.raises(FrameTimeout):
        cache.wait(None, 0.01)
    assert cache.wait(NOW + 2 * SECOND, 0.01).image[0, 0, 0] == 1  # still reachable by its stamp

    taken: list[int] = []
    waiter = threading.Thread(target=lambda: taken.append(cache.wait(None, 5.0).stamp_ns))
    waiter.start()
    cache.put_image(20 * SECOND, _image(2))  # the first frame of the new timeline
    waiter.join(5.0)
    assert taken == [20 * SECOND]


def test_without_a_clock_reading_no_stamp_is_judged() -> None:
    clock = FakeClock(None)  # use_sim_time before the first /clock message
    cache = _cache(clock)
    assert cache.put_image(NOW + 3600 * SECOND, _image(1)) is None
    assert cache.wait(None, 0.01).stamp_ns == NOW + 3600 * SECOND
    unbounded = FrameCache(4)  # no clock given at all: arrival order alone
    unbounded.put_image(9 * SECOND, _image(1))
    unbounded.put_image(2 * SECOND, _image(2))
    assert unbounded.wait(None, 0.01).stamp_ns == 2 * SECOND


def test_a_waiter_for_the_newest_frame_is_not_woken_by_a_frame_from_the_future() -> None:
    cache = _cache(FakeClock())
    started = threading.Event()
    found: list[int] = []

    def waiter() -> None:
        started.set()
        found.append(cache.wait(None, 10.0, need_ground_truth=True).stamp_ns)

    thread = threading.Thread(target=waiter)
    thread.start()
    assert started.wait(5.0)
    jump = NOW + 3600 * SECOND
    cache.put_ground_truth(jump, "gt")
    cache.put_image(jump, _image(1))
    cache.put_image(NOW, _image(2))
    cache.put_ground_truth(NOW, "gt")
    thread.join(10.0)
    assert found == [NOW]


def test_a_timeout_for_the_newest_frame_says_that_images_came_from_the_future() -> None:
    cache = _cache(FakeClock())
    cache.put_image(NOW + 3600 * SECOND, _image(1))
    cache.put_image(NOW + 7200 * SECOND, _image(1))
    with pytest.raises(FrameTimeout) as caught:
        cache.wait(None, 0.01)
    message = str(caught.value)
    assert message.startswith(
        "no image for any frame within 0.0 s; 2 image(s) came stamped more than 5 s ahead"
    )
    assert "by 7200.000 s" in message and "use_sim_time" in message


def test_the_clock_and_the_bound_come_together() -> None:
    with pytest.raises(ValueError, match="both"):
        FrameCache(4, clock_ns=FakeClock())
    with pytest.raises(ValueError, match="> 0"):
        FrameCache(4, clock_ns=FakeClock(), max_ahead_ns=0)
