"""ResultsStore: durable appends, resume after a kill, dedupe, config and lock checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aiv_eval import (
    ConfigMismatchError,
    CorruptResultsError,
    DuplicateEpisodeError,
    ResultsStore,
    RunDirLockedError,
    RunDirWriteError,
    StoreError,
    load_run,
)
from aiv_eval.records.store import canonical_results_bytes

from .builders import index_entry, infra, record, run_config, six_episodes


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_each_append_is_one_line_and_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    records = six_episodes()
    with ResultsStore.open(tmp_path / "run", run_config()) as store:
        fd = store._fd
        for i, rec in enumerate(records[:3]):
            before = len(synced)
            store.append(rec)
            assert synced[before:].count(fd) == 1, "every append must fsync the results file"
            assert len(_lines(store.results_path)) == i + 1
    assert (tmp_path / "run" / "results.jsonl").read_bytes() == canonical_results_bytes(records[:3])


def test_run_json_holds_the_configuration(tmp_path: Path) -> None:
    cfg = run_config(slice=(10, 20))
    with ResultsStore.open(tmp_path / "run", cfg) as store:
        assert store.run_id == "run-test"
    data = json.loads((tmp_path / "run" / "run.json").read_text())
    assert data["config"]["method"]["nbv"]["type"] == "llm"
    assert data["slice"] == [10, 20] and data["seed"] == 42 and data["code_version"] == "abc123"
    assert data["index_file"] == "val/pv_index_all.jsonl"
    assert data["config_info"]["fusion_type"] == "attr_majority"


def test_default_run_id_is_a_config_fingerprint() -> None:
    a = run_config(run_id="")
    b = run_config(run_id="")
    c = run_config(run_id="", seed=7)
    assert a.run_id == b.run_id != c.run_id
    assert a.run_id.startswith("run-")


def test_resume_after_a_kill_mid_write(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    run_dir = tmp_path / "run"
    records = six_episodes()
    with ResultsStore.open(run_dir, run_config()) as store:
        store.append(records[0])
        store.append(records[1])
    results = run_dir / "results.jsonl"
    good = results.read_bytes()
    # A killed process leaves the first part of the next line behind (no newline).
    torn = records[2].to_json_line().encode()[:57]
    with open(results, "ab") as f:
        f.write(torn)

    # Readers ignore the fragment without touching the file.
    loaded = load_run(run_dir)
    assert [r.episode_key for r in loaded.records] == [records[0].episode_key, records[1].episode_key]
    assert loaded.torn_tail is not None and loaded.torn_tail.dropped_bytes == len(torn)
    assert results.read_bytes() == good + torn

    with ResultsStore.open(run_dir, run_config()) as store:
        assert store.repair is not None
        assert (
            store.repair.line_number == 3
            and store.repair.dropped_bytes == len(torn)
            and store.repair.repaired
        )
        assert results.read_bytes() == good, "the fragment is truncated away, nothing else"
        assert store.completed_keys() == {records[0].episode_key, records[1].episode_key}
        assert not store.is_complete(records[2].episode_key)
        for rec in records[2:]:
            store.append(rec)
    assert "unterminated fragment" in caplog.text
    assert results.read_bytes() == canonical_results_bytes(records)


def test_a_complete_but_unterminated_last_line_is_not_a_record(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with ResultsStore.open(run_dir, run_config()) as store:
        store.append(six_episodes()[0])
    with open(run_dir / "results.jsonl", "ab") as f:
        f.write(six_episodes()[1].to_json_line().encode())  # the newline never made it
    with ResultsStore.open(run_dir, run_config()) as store:
        assert len(store) == 1 and store.repair is not None


def test_corrupt_complete_line_is_an_error(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with ResultsStore.open(run_dir, run_config()) as store:
        store.append(six_episodes()[0])
    with open(run_dir / "results.jsonl", "ab") as f:
        f.write(b'{"not": "a record"}\n')
        f.write(six_episodes()[1].to_json_line().encode() + b"\n")
    with pytest.raises(CorruptResultsError, match="line 2"):
        ResultsStore.open(run_dir, run_config())
    with pytest.raises(CorruptResultsError, match="line 2"):
        load_run(run_dir)


def test_duplicates_are_refused_and_failures_can_be_retried(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    entry = index_entry(episode="ep9")
    ok = record(9, entry, "Yes", ["Yes"])
    with ResultsStore.open(run_dir, run_config()) as store:
        store.append(infra(9, entry, reason="verifier timed out", attempts=1))
        assert store.failed_keys() == {ok.episode_key} and not store.is_complete(ok.episode_key)
        store.append(infra(9, entry, reason="sim died", attempts=2))
        assert store.attempts(ok.episode_key) == 2
        store.append(ok)
        assert store.is_complete(ok.episode_key) and store.failed_keys() == set()
        with pytest.raises(DuplicateEpisodeError):
            store.append(ok)
        with pytest.raises(DuplicateEpisodeError):
            store.append(infra(9, entry, attempts=4))
    assert len(_lines(run_dir / "results.jsonl")) == 3  # append-only: both failures stay in the file
    loaded = load_run(run_dir)
    assert len(loaded.records) == 1 and loaded.records[0] == ok  # effective record = the last one
    assert loaded.line_count == 3


def test_a_file_with_two_ok_lines_for_one_key_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    rec = six_episodes()[0]
    with ResultsStore.open(run_dir, run_config()) as store:
        store.append(rec)
    with open(run_dir / "results.jsonl", "ab") as f:
        f.write(rec.to_json_line().encode() + b"\n")
    with pytest.raises(CorruptResultsError, match="follows a completed record"):
        load_run(run_dir)


def test_records_of_another_run_are_refused(tmp_path: Path) -> None:
    with (
        ResultsStore.open(tmp_path / "run", run_config()) as store,
        pytest.raises(StoreError, match="run_id"),
    ):
        store.append(record(0, index_entry(), "Yes", ["Yes"], run_id="some-other-run"))


def test_resume_with_a_different_configuration_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with ResultsStore.open(run_dir, run_config()) as store:
        store.append(six_episodes()[0])
    changed = run_config(
        config={
            "method": {"nbv": {"type": "random"}, "fusion": {"type": "attr_majority"}},
            "env": {"max_steps": 6},
        },
        seed=7,
    )
    with pytest.raises(ConfigMismatchError) as info:
        ResultsStore.open(run_dir, changed)
    assert set(info.value.differing) == {"config.method.nbv.type", "seed"}
    message = str(info.value)
    assert "config.method.nbv.type: stored 'llm', given 'random'" in message
    assert "seed: stored 42, given 7" in message
    # the refused open released the lock and changed nothing
    with ResultsStore.open(run_dir, run_config()) as store:
        assert len(store) == 1
    # explicitly allowed keys may differ (run.json keeps the original values)
    with ResultsStore.open(run_dir, changed, allow_changed=["config.method", "seed"]) as store:
        assert store.run_config.seed == 42


def test_code_version_and_slice_are_part_of_the_identity(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    ResultsStore.open(run_dir, run_config()).close()
    with pytest.raises(ConfigMismatchError, match="code_version"):
        ResultsStore.open(run_dir, run_config(code_version="def456"))
    with pytest.raises(ConfigMismatchError, match="slice"):
        ResultsStore.open(run_dir, run_config(slice=(0, 100)))


def test_two_writers_cannot_open_one_run_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    store = ResultsStore.open(run_dir, run_config())
    try:
        with pytest.raises(RunDirLockedError, match=f"pid {os.getpid()}"):
            ResultsStore.open(run_dir, run_config())
        # another process is refused too
        code = textwrap.dedent(
            f"""
            import sys
            sys.path[:0] = {sys.path!r}
            from aiv_eval import ResultsStore, RunDirLockedError
            from evaluation.builders import run_config
            try:
                ResultsStore.open({str(run_dir)!r}, run_config())
            except RunDirLockedError:
                sys.exit(3)
            sys.exit(0)
            """
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 3, proc.stderr
        # readers are not blocked
        assert load_run(run_dir).records == ()
    finally:
        store.close()
    ResultsStore.open(run_dir, run_config()).close()  # free again


def test_results_without_run_json_are_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "results.jsonl").write_bytes(six_episodes()[0].to_json_line().encode() + b"\n")
    with pytest.raises(StoreError, match=r"no run\.json"):
        ResultsStore.open(run_dir, run_config())
    with pytest.raises(StoreError, match="not a run dir"):
        load_run(run_dir)


def test_two_runs_with_the_same_decisions_write_identical_files(tmp_path: Path) -> None:
    for name in ("a", "b"):
        with ResultsStore.open(tmp_path / name, run_config()) as store:
            for rec in six_episodes():
                store.append(rec)
    for fname in ("results.jsonl", "run.json"):
        assert (tmp_path / "a" / fname).read_bytes() == (tmp_path / "b" / fname).read_bytes()


def test_records_are_returned_in_index_order(tmp_path: Path) -> None:
    records = six_episodes()
    with ResultsStore.open(tmp_path / "run", run_config()) as store:
        for rec in reversed(records):
            store.append(rec)
        assert [r.episode_index for r in store.records()] == list(range(6))
    assert [r.episode_index for r in load_run(tmp_path / "run").records] == list(range(6))


def test_a_failed_write_leaves_no_partial_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = six_episodes()
    with ResultsStore.open(tmp_path / "run", run_config()) as store:
        store.append(records[0])
        before = store.results_path.read_bytes()

        def broken_fsync(fd: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fsync", broken_fsync)
        # A run dir error, not an OSError: episode drivers record dataset OSErrors as failures, not this.
        with pytest.raises(RunDirWriteError, match=r"cannot write .*results\.jsonl: No space left"):
            store.append(records[1])
        monkeypatch.undo()
        assert store.results_path.read_bytes() == before
        assert not store.is_complete(records[1].episode_key)
        store.append(records[1])
    assert len(load_run(tmp_path / "run").records) == 2


def test_a_killed_writer_loses_only_its_partial_line_and_releases_the_lock(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path[:0] = {sys.path!r}
        from aiv_eval import ResultsStore
        from evaluation.builders import run_config, six_episodes
        records = six_episodes()
        store = ResultsStore.open({str(run_dir)!r}, run_config())
        store.append(records[0])
        store.append(records[1])
        line = records[2].to_json_line().encode()
        os.write(store._fd, line[: len(line) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    with ResultsStore.open(run_dir, run_config()) as store:  # the dead writer's lock is gone
        assert store.repair is not None and store.repair.line_number == 3
        assert [r.episode_index for r in store.records()] == [0, 1]
        for rec in six_episodes()[2:]:
            store.append(rec)
    assert (run_dir / "results.jsonl").read_bytes() == canonical_results_bytes(six_episodes())


def test_a_run_dir_that_cannot_be_created_is_one_line_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory\n")
    with pytest.raises(RunDirWriteError) as caught:
        ResultsStore.open(blocker / "run", run_config())
    assert "\n" not in str(caught.value) and str(blocker / "run") in str(caught.value)
    assert blocker.read_text() == "not a directory\n"
