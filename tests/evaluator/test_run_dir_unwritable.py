"""A run dir that stops being writable (disk full, read-only) ends the run with one line, never a traceback.

Tests run as root, where a read-only mode bit does not stop writes, so the failure is injected: ``os.write``
on ``results.jsonl`` (after writing half a line, as a filling disk does) or the crop JPEG save raises
``ENOSPC``. What was recorded must stay intact and a resume must end byte-identical to an uninterrupted run.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from PIL import Image
from support.eval_specs import ORACLE_VETO_PARAMS

_REAL_WRITE = os.write


def _run(tmp_path: Path, root: Path, name: str) -> tuple[int, Path]:
    params = tmp_path / f"{name}.yaml"
    params.write_text(ORACLE_VETO_PARAMS.format(run_dir=tmp_path / name))
    code = aiv_eval([
        "run", str(params), "--dataset", str(root), "--set", "evaluator.slice_end=4", "--mode", "inprocess",
    ])  # fmt: skip
    return code, tmp_path / name


@pytest.fixture
def reference(tmp_path: Path, micro_root: Path) -> bytes:
    code, run_dir = _run(tmp_path, micro_root, "reference")
    assert code == 0
    return (run_dir / "results.jsonl").read_bytes()


def _assert_one_line_error(err: str, path: str) -> None:
    lines = [line for line in err.splitlines() if "error" in line.lower() or "Traceback" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert path in lines[0] and "No space left on device" in lines[0] and "resume" in lines[0]


def test_disk_full_while_appending_keeps_results_and_resumes_identically(
    tmp_path: Path,
    micro_root: Path,
    reference: bytes,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    appends = {"n": 0}

    def filling_disk(fd: int, data: bytes | memoryview) -> int:
        if not os.readlink(f"/proc/self/fd/{fd}").endswith("results.jsonl"):
            return _REAL_WRITE(fd, data)
        appends["n"] += 1
        if appends["n"] < 3:
            return _REAL_WRITE(fd, data)
        if appends["n"] == 3:  # half a line reaches the disk, then it is full
            return _REAL_WRITE(fd, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    capsys.readouterr()
    monkeypatch.setattr(os, "write", filling_disk)
    code, run_dir = _run(tmp_path, micro_root, "full")
    monkeypatch.setattr(os, "write", _REAL_WRITE)
    assert code == 1
    _assert_one_line_error(capsys.readouterr().err, str(run_dir / "results.jsonl"))
    kept = (run_dir / "results.jsonl").read_bytes()
    assert kept == b"".join(reference.splitlines(keepends=True)[:2])  # two records, no partial third line

    assert _run(tmp_path, micro_root, "full")[0] == 0
    assert (run_dir / "results.jsonl").read_bytes() == reference  # no extra retry line


def test_disk_full_while_saving_a_crop_is_not_recorded_as_a_failed_episode(
    tmp_path: Path,
    micro_root: Path,
    reference: bytes,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real_save = Image.Image.save
    saves = {"n": 0}

    def filling_disk(self: Image.Image, fp: object, *args: object, **kwargs: object) -> None:
        saves["n"] += 1
        if saves["n"] < 5:
            real_save(self, fp, *args, **kwargs)  # type: ignore[arg-type]
            return
        Path(str(fp)).write_bytes(b"\xff\xd8partial")  # a torn JPEG, as a full disk leaves
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(fp))

    capsys.readouterr()
    monkeypatch.setattr(Image.Image, "save", filling_disk)
    code, run_dir = _run(tmp_path, micro_root, "crops")
    monkeypatch.undo()
    assert code == 1
    err = capsys.readouterr().err
    _assert_one_line_error(err, str(run_dir / "crops"))
    assert not [
        p for p in (run_dir / "crops").rglob("*.jpg") if p.read_bytes().startswith(b"\xff\xd8partial")
    ]
    kept = (run_dir / "results.jsonl").read_bytes()
    assert reference.startswith(kept)  # only complete records of episodes whose crops were all saved

    assert _run(tmp_path, micro_root, "crops")[0] == 0
    # Today's behaviour before the fix was an extra "dataset error" retry line here: the crop failure is the
    # run dir's, so the episode is re-run as the same attempt and the file matches an uninterrupted run.
    assert (run_dir / "results.jsonl").read_bytes() == reference
