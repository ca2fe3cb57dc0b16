"""The visibility model's rows by height level: what the fit counts, how the file keeps them, what the NBV reads.

Hand-made survey pairs: a lid (a claim on top) shows only from the views above, a sole only from below; the
eye-level rows must stay what a one-level survey of the same pairs gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiv_eval.evidence.survey import SurveyAnswer, SurveyPair, SurveyView, pair_from_json, pair_to_json
from aiv_eval.evidence.visibility_fit import visibility_level_rows, visibility_rows
from aiv_verifier.core.types import Decision
from aiv_verifier.core.visibility import claim_vertical
from aiv_verifier.evidence_tables import (
    EvidenceFileError,
    FittedOn,
    load_visibility,
    visibility_document,
)

CLAIMS = (("lid_color", "part_colour", "sided"), ("sole_color", "part_colour", "sided"))
VERTICALS = tuple(claim_vertical(name, "red") for name, _, _ in CLAIMS)


def view(sector: int, level: int) -> SurveyView:
    lid, sole = level == 1, level == -1
    answers = tuple(
        SurveyAnswer(name, kind, hint, Decision.YES if seen else Decision.UNSURE, False, True, seen)
        for (name, kind, hint), seen in zip(CLAIMS, (lid, sole), strict=True)
    )
    return SurveyView(sector, "far", "large", 1.0, answers, level)


def pair(index: int, levels: tuple[int, ...]) -> SurveyPair:
    views = tuple(view(sector, level) for level in levels for sector in range(6))
    return SurveyPair(index, "positive", 1, CLAIMS, views, VERTICALS if len(levels) > 1 else ())


LEVELED = [pair(index, (0, 1, -1)) for index in range(3)]
EYE_ONLY = [pair(index, (0,)) for index in range(3)]


def test_the_names_vertical_hints() -> None:
    assert VERTICALS == ("top", "bottom")


def test_rows_by_level_count_where_a_claim_on_top_or_underneath_shows() -> None:
    rows = visibility_level_rows(LEVELED)
    assert rows[("part_colour", "top", 1, "far", "any")].visible == 18
    assert rows[("part_colour", "top", 1, "far", "any")].views == 18
    assert rows[("part_colour", "top", 0, "far", "any")].visible == 0
    assert rows[("part_colour", "bottom", -1, "far", "same")].rate > 0.9  # missed above / at eye level here
    assert rows[("part_colour", "bottom", 1, "far", "same")].visible == 0


def test_the_eye_level_rows_are_those_of_the_one_level_survey() -> None:
    assert visibility_rows(LEVELED) == visibility_rows(EYE_ONLY)
    assert visibility_level_rows(EYE_ONLY) == {}


def test_the_file_keeps_the_rows_by_level_and_a_one_level_fit_writes_none(tmp_path: Path) -> None:
    fitted = [FittedOn(source="hand-made", pairs=3)]
    plain = visibility_document(fitted, "test", visibility_rows(EYE_ONLY), visibility_level_rows(EYE_ONLY))
    assert "level_rows" not in plain
    document = visibility_document(fitted, "test", visibility_rows(LEVELED), visibility_level_rows(LEVELED))
    path = tmp_path / "visibility.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    model = load_visibility(path).model
    assert model.levels == (-1, 0, 1)
    above = model.level_probability("part_colour", "sided", "top", 1, "far", "same", "60")
    below = model.level_probability("part_colour", "sided", "top", -1, "far", "same", "60")
    assert above > 0.9 > 0.1 > below
    # A view at eye level of a one-level episode is never asked about levels: the eye-level rows answer.
    assert model.probability("part_colour", "sided", "far", "any") == pytest.approx(1 / 38)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"level": 9}, "level_rows[0].level must be an integer in -2..2, got 9"),
        ({"vertical": "sideways"}, "level_rows[0].vertical must be one of"),
        ({"distance": "90"}, "level_rows[0].distance must be one of"),
    ],
)
def test_a_bad_row_by_level_is_refused_in_one_line(tmp_path: Path, change: dict, message: str) -> None:
    document = visibility_document(
        [FittedOn(source="hand-made", pairs=3)], "t", visibility_rows(LEVELED), visibility_level_rows(LEVELED)
    )
    document["level_rows"][0].update(change)
    path = tmp_path / "visibility.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(EvidenceFileError, match=message.replace("[", r"\[").replace("]", r"\]")) as error:
        load_visibility(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)


def test_a_survey_with_levels_round_trips_with_its_vertical_hints() -> None:
    for original in (*LEVELED, *EYE_ONLY):
        data = pair_to_json(original)
        assert ("verticals" in data) == (original in LEVELED)
        assert pair_from_json(json.loads(json.dumps(data))) == original


def test_levels_into_keeps_the_shipped_eye_level_rows_and_adds_the_rows_by_level(
    tmp_path: Path, capsys
) -> None:
    from aiv_eval.cli import main
    from aiv_verifier.evidence_tables import DEFAULT_VISIBILITY_FILE

    survey = tmp_path / "survey.json"
    survey.write_text(
        json.dumps(
            {
                "key": "oracle",
                "fitted_on": [
                    FittedOn(source="hand-made", preset="elevated", seed=5, split="train").to_dict()
                ],
                "pairs": [pair_to_json(item) for item in LEVELED],
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "visibility.json"
    args = ["visibility", "unused.yaml", "--from-survey", str(survey), "--out", str(out)]
    assert main([*args, "--levels-into", str(DEFAULT_VISIBILITY_FILE)]) == 0
    shipped, refit = load_visibility(DEFAULT_VISIBILITY_FILE), load_visibility(out)
    assert dict(refit.model.rows) == dict(shipped.model.rows)
    assert dict(refit.model.level_rows) == visibility_level_rows(LEVELED)
    assert refit.fitted_on[: len(shipped.fitted_on)] == shipped.fitted_on and refit.fitted_on[-1].seed == 5
    # Pairs without views off eye level have nothing to add.
    survey.write_text(
        json.dumps({"key": "oracle", "fitted_on": [], "pairs": [pair_to_json(p) for p in EYE_ONLY]})
    )
    assert main([*args, "--levels-into", str(DEFAULT_VISIBILITY_FILE)]) != 0
    assert "no views off eye level" in capsys.readouterr().err
