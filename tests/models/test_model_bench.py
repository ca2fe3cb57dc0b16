"""``aiv-eval bench-models`` runs quickly on tiny models and prints per-stage latency and batching ratios.

The detector and embedding batching rows (one view at a time against batches) are checked for their structure,
for ratios that are the quotient of the printed times, and for batched outputs that equal one-at-a-time ones
within the tolerance the batching tests state.

Only the output's structure is checked: timings on a shared CI machine say nothing, and tests never assert them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from aiv_eval.cli import main as aiv_eval
from support.offline_models import limit_torch_threads, no_network  # noqa: F401 - fixture
from support.tiny_embedding import clip_dir_fixture  # noqa: F401 - fixture clip_dir

pytestmark = pytest.mark.usefixtures("no_network")

STAGES = ("text_tokenize", "text_forward", "image_preprocess", "image_forward", "score")
RATIO = re.compile(r"^  batched vs per-item: (.+): ([\d.]+) ms vs ([\d.]+) ms, speed-up ([\d.]+)x$")


def _sections(output: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for line in output.splitlines():
        if line.startswith("["):
            current = line[1 : line.index("]")]
            sections[current] = [line]
        elif current:
            sections[current].append(line)
    return sections


def _check_embedding_section(lines: list[str]) -> None:
    assert "on cpu in float32" in lines[0]
    stages = [line.split()[1] for line in lines if line.startswith("  stage ")]
    assert stages == list(STAGES)
    ratios = [RATIO.match(line) for line in lines if "batched vs per-item" in line]
    assert len(ratios) == 2 and all(ratios)
    for match in ratios:
        assert match is not None
        batched, per_item, ratio = (float(match.group(i)) for i in (2, 3, 4))
        assert batched > 0 and per_item > 0 and ratio == pytest.approx(per_item / batched, rel=0.02, abs=0.01)


def test_default_tiny_models_print_stages_and_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    limit_torch_threads()
    assert (
        aiv_eval(
            ["bench-models", "--repeats", "1", "--batch-repeats", "1", "--device", "cpu", "--no-detector"]
        )
        == 0
    )
    output = capsys.readouterr().out
    assert output.startswith("aiv-eval bench-models: tiny random models built in ")
    sections = _sections(output)
    assert list(sections) == ["clip", "clip batching", "siglip2", "siglip2 batching", "detector", "chat"]
    _check_embedding_section(sections["clip"])
    _check_embedding_section(sections["siglip2"])
    _check_batching_section(sections["clip batching"], "crop", [1, 4, 8, 16])
    _check_batching_section(sections["siglip2 batching"], "crop", [1, 4, 8, 16])
    assert sections["detector"] == ["[detector] skipped: --no-detector"]
    _check_chat_section(sections["chat"])


BATCH_ROW = re.compile(
    r"^  batch +(\d+): +([\d.]+) ms per (\w+), speed-up +([\d.]+)x \(forward ([\d.]+) ms, ([\d.]+)x\); (.+)$"
)
IN_FLIGHT_ROW = re.compile(
    r"^ +(\d+) in flight \(the serving path\): one forward each ([\d.]+) ms per crop, batched ([\d.]+) ms per "
    r"crop, speed-up +([\d.]+)x \(against one at a time: ([\d.]+)x\); (.+)$"
)
DIFFERENCE = re.compile(r"max \|(\w+) diff\| ([\d.e+-]+)")


def _check_batching_section(lines: list[str], unit: str, sizes: list[int]) -> None:
    assert "on cpu (float32)" in lines[0] and f"{max(sizes)} {unit}s" in lines[0]
    alone = re.match(
        rf"^  one at a time \(reference\): +([\d.]+) ms per {unit} \(forward ([\d.]+)\)$", lines[1]
    )
    assert alone is not None
    rows = [BATCH_ROW.match(line) for line in lines[2 : 2 + len(sizes)]]
    assert all(rows)
    for match, size in zip(rows, sizes, strict=True):
        assert match is not None and int(match.group(1)) == size and match.group(3) == unit
        per_view, ratio = float(match.group(2)), float(match.group(4))
        assert ratio == pytest.approx(float(alone.group(1)) / per_view, rel=0.02, abs=0.01)
        differences = dict(DIFFERENCE.findall(match.group(7)))
        assert set(differences) == ({"logit", "box"} if unit == "frame" else {"score"})
        # float32: a batched output equals the one-at-a-time output up to rounding (tests/models/test_model_batching)
        assert all(float(value) <= 1e-4 for value in differences.values())
    in_flight = [IN_FLIGHT_ROW.match(line) for line in lines[2 + len(sizes) :]]
    if unit == "frame":
        assert in_flight == []
        return
    # The embedding models also time the serving path: callers in flight, one forward each against batched.
    assert all(in_flight) and [int(m.group(1)) for m in in_flight if m] == [
        size for size in sizes if size > 1
    ]
    for match in in_flight:
        assert match is not None
        each, batched, ratio, against_alone = (float(match.group(i)) for i in (2, 3, 4, 5))
        assert ratio == pytest.approx(each / batched, rel=0.02, abs=0.01)
        assert against_alone == pytest.approx(float(alone.group(1)) / batched, rel=0.02, abs=0.01)
        assert float(dict(DIFFERENCE.findall(match.group(6)))["score"]) <= 1e-4


CHAT_BATCH = re.compile(
    r"^  batch +(\d+): +([\d.]+) ms per view, speed-up +([\d.]+)x, token ids equal to one at a time: (\d+)/(\d+)$"
)


def _check_chat_section(lines: list[str]) -> None:
    assert "qwen3_vl" in lines[0] and "8 attribute calls per view" in lines[0]
    alone = re.match(r"^  one at a time \(reference\): +([\d.]+) ms per view$", lines[1])
    assert alone is not None
    batches = [CHAT_BATCH.match(line) for line in lines if line.startswith("  batch ")]
    assert [int(m.group(1)) for m in batches if m] == [1, 4, 8, 16]
    for match in batches:
        assert match is not None
        per_view, ratio = float(match.group(2)), float(match.group(3))
        assert ratio == pytest.approx(float(alone.group(1)) / per_view, rel=0.02, abs=0.01)
        # float32 on a CPU: a padded batch answers with exactly the token ids of one call at a time
        assert match.group(4) == match.group(5)
    assert sum("MV-Attr episode" in line for line in lines) == 5


def test_model_directories_from_the_command_line(clip_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    limit_torch_threads()
    code = aiv_eval(
        ["bench-models", "--clip", str(clip_dir), "--repeats", "2", "--device", "cpu", "--text", "a red mug"]
    )
    assert code == 0
    output = capsys.readouterr().out
    assert "model directories from the command line; 1 texts" in output
    sections = _sections(output)
    assert str(clip_dir) in sections["clip"][0]
    _check_embedding_section(sections["clip"])
    assert sections["detector"][0].startswith("[detector] skipped:")


def test_a_bad_directory_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert aiv_eval(["bench-models", "--clip", str(tmp_path / "none"), "--repeats", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--clip" in err[0] and "does not exist" in err[0]


@pytest.fixture(scope="module")
def tiny_dino(tmp_path_factory: pytest.TempPathFactory) -> str:
    from aiv_models.tiny.grounding_dino_checkpoint import save_grounding_dino_once
    from support.offline_models import shared_model_dir

    return save_grounding_dino_once(*shared_model_dir(tmp_path_factory, "grounding-dino-tiny"))


def test_detector_rows_time_frames_one_at_a_time_and_batched(
    tiny_dino: str, clip_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    limit_torch_threads()
    args = ["bench-models", "--detector", tiny_dino, "--clip", str(clip_dir), "--device", "cpu"]
    assert aiv_eval([*args, "--repeats", "1", "--batch-repeats", "1", "--batch-sizes", "1,4"]) == 0
    sections = _sections(capsys.readouterr().out)
    assert list(sections) == ["clip", "clip batching", "detector", "detector batching"]
    _check_batching_section(sections["detector batching"], "frame", [1, 4])
    _check_batching_section(sections["clip batching"], "crop", [1, 4])


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--batch-sizes", "1,x", "comma-separated integers"),
        ("--batch-sizes", "0,4", "at least 1"),
        ("--batch-repeats", "-1", "--batch-repeats"),
        ("--threads", "-2", "--threads"),
    ],
)
def test_bad_batching_options_are_one_line_and_exit_2(
    clip_dir: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, words: str
) -> None:
    assert aiv_eval(["bench-models", "--clip", str(clip_dir), option, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and option in err[0] and words in err[0]
