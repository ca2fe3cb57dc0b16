"""ProgressBar with a fake clock: rate, ETA, running accuracy, TTY vs log output."""

from __future__ import annotations

import io

import pytest
from aiv_eval import ProgressBar, format_duration


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_format_duration() -> None:
    assert format_duration(0) == "0:00"
    assert format_duration(59.6) == "1:00"
    assert format_duration(180) == "3:00"
    assert format_duration(3725) == "1:02:05"
    assert format_duration(None) == "--:--"
    assert format_duration(float("inf")) == "--:--"


def test_rate_eta_and_accuracy() -> None:
    clock = FakeClock()
    bar = ProgressBar(100, stream=io.StringIO(), clock=clock, is_tty=False)
    assert bar.rate is None and bar.eta is None and bar.accuracy is None
    for i in range(10):
        clock.now += 2.0
        bar.update(correct=i < 7)
    assert bar.rate == pytest.approx(0.5)  # 10 episodes in 20 s
    assert bar.eta == pytest.approx(180.0)  # 90 left at 0.5 ep/s
    assert bar.accuracy == pytest.approx(0.7)
    line = bar.render()
    assert "10/100 (10.0%)" in line and "2.0 s/ep" in line and "ETA 3:00" in line and "acc 0.7000" in line
    assert "elapsed 0:20" in line


def test_infra_failures_do_not_count_for_accuracy() -> None:
    clock = FakeClock()
    bar = ProgressBar(4, stream=io.StringIO(), clock=clock, is_tty=False)
    bar.update(correct=True)
    bar.update(infra_failure=True)
    bar.update(correct=False)
    assert bar.done == 3 and bar.scored == 2 and bar.accuracy == 0.5
    assert "infra failures 1" in bar.render()


def test_resumed_episodes_are_not_part_of_the_rate() -> None:
    clock = FakeClock()
    bar = ProgressBar(
        100, initial=50, initial_correct=40, initial_scored=50, stream=io.StringIO(), clock=clock
    )
    clock.now += 10.0
    bar.update(correct=True, n=5)
    assert bar.rate == pytest.approx(0.5)
    assert bar.eta == pytest.approx(90.0)
    assert bar.accuracy == pytest.approx(45 / 55)
    with pytest.raises(ValueError):
        ProgressBar(10, initial=11)


def test_log_mode_writes_periodic_plain_lines() -> None:
    clock = FakeClock()
    out = io.StringIO()
    bar = ProgressBar(10, stream=out, clock=clock, is_tty=False, log_interval_s=30.0)
    for _ in range(9):
        clock.now += 10.0  # updates at t = 10, 20, ..., 90
        bar.update(correct=True)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert [ln.split("]")[1].split("(")[0].strip() for ln in lines] == ["3/10", "6/10", "9/10"]
    clock.now += 1.0
    bar.update(correct=False)  # completion is always written
    bar.close()
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 4 and "10/10 (100.0%)" in lines[-1] and "acc 0.9000" in lines[-1]


def test_tty_mode_redraws_in_place() -> None:
    clock = FakeClock()
    out = io.StringIO()
    bar = ProgressBar(3, stream=out, clock=clock, is_tty=True, tty_interval_s=0.1)
    clock.now += 1.0
    bar.update(correct=True)
    bar.update(correct=True)  # same instant: throttled
    clock.now += 1.0
    bar.update(correct=False)
    bar.close()
    text = out.getvalue()
    assert text.count("\r") == 3  # first update, completion, close
    assert text.endswith("\n") and text.count("\n") == 1
    assert "3/3" in text.rsplit("\r", 1)[1]


def test_tty_detection_from_the_stream() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert ProgressBar(1, stream=Tty()).is_tty is True
    assert ProgressBar(1, stream=io.StringIO()).is_tty is False
