"""The verifier node's counters: an image stamped ahead is counted every time and reported once per period."""

from __future__ import annotations

from aiv_models.timing import StageClock
from aiv_verifier.service_stats import ServiceStats, add_stage_times


def test_images_stamped_ahead_are_counted_each_time_and_reported_once_per_period() -> None:
    now = [100.0]
    stats = ServiceStats(warning_period_s=10.0, monotonic=lambda: now[0])
    assert stats.stamp_ahead() == 1  # the first one is reported at once
    now[0] = 105.0
    assert stats.stamp_ahead() is None
    assert stats.stamp_ahead() is None
    now[0] = 110.5
    assert stats.stamp_ahead() == 3  # with the two that were only counted
    troubles, summary, values = stats.diagnostics()
    assert troubles and "4 images stamped ahead" in summary
    assert dict(values)["stamps_ahead"] == "4"


def test_served_requests_add_up_their_stage_times() -> None:
    stats = ServiceStats()
    first, second = StageClock(), StageClock()
    first.seconds, first.calls = {"verify": 0.2}, {"verify": 2}
    second.seconds, second.calls = {"verify": 0.4, "ros.decode": 0.01}, {"verify": 2, "ros.decode": 1}
    stats.request_ended(False, "", first)
    stats.request_ended(True, "the move timed out", second)
    stats.request_ended(True, "rejected", None)
    troubles, summary, values = stats.diagnostics()
    table = dict(values)
    assert troubles and summary.startswith("1 answered, 2 failed")
    assert table["latency_ms.verify"] == "150.00" and table["latency_ms.ros.decode"] == "10.00"
    assert table["last_error"] == "rejected"
    stats.bad_message("image at 5 ns: bad encoding")
    assert dict(stats.diagnostics()[2])["last_error"] == "image at 5 ns: bad encoding"


def test_the_ros_stages_join_the_agents_clock() -> None:
    agent, port = StageClock(), StageClock()
    agent.seconds, agent.calls = {"verify": 1.0}, {"verify": 1}
    port.seconds, port.calls = {"verify": 0.5, "ros.frame_wait": 0.25}, {"verify": 1, "ros.frame_wait": 3}
    add_stage_times(agent, port)
    assert agent.seconds == {"verify": 1.5, "ros.frame_wait": 0.25}
    assert agent.calls == {"verify": 2, "ros.frame_wait": 3}
