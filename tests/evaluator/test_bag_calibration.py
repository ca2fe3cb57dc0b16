"""Calibrating the evidential fusion on a lab's own recorded sessions: session bags plus a hand-written labels
file become survey pairs that the calibration fit takes as they are (:mod:`aiv_eval.evidence.bag_survey`).

The committed sample session (bags/session_micro_mug) is surveyed as recorded; the rules it does not exercise
(a sector judged twice, a view without a box, a recorded claim kind, a whole-description attribute, a request
without steps, a second request) are checked on a small bag written here with the session writer. A labels
file is written by hand, so every mistake in one must come back as one line naming the file and the problem.

Needs the built workspace (rclpy, aiv_interfaces); skipped without it unless AIV_REQUIRE_ROS=1. No DDS.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from aiv_eval.evidence.bag_survey import BagLabel, LabelsError, load_labels, survey_bags
from aiv_eval.evidence.calibration import fit_backend
from aiv_eval.evidence.survey import SurveyPair
from aiv_verifier.claims import CATEGORY_KIND, claim_kind, view_hint
from aiv_verifier.core.evidential import view_quality
from aiv_verifier.core.types import Decision
from support.sample_bags import SESSION

try:
    from aiv_bags_ros.session_bag import ROLES
    from aiv_bags_ros.session_reader import RecordedEpisode, read_session
    from aiv_bags_ros.session_writer import BagStream
    from aiv_interfaces.action import VerifyInstance
    from aiv_interfaces.msg import AttributeState, Detection2D, StepReport, Verdict
    from builtin_interfaces.msg import Time
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import Image
except ImportError as error:  # pragma: no cover - depends on the environment
    if os.environ.get("AIV_REQUIRE_ROS") == "1":
        raise
    pytest.skip(f"needs the built workspace: {error} (source .env.sh)", allow_module_level=True)


@pytest.fixture(scope="module")
def sample() -> list[RecordedEpisode]:
    """The sample session's requests as recorded (the test reads the ids from the bag, not from here)."""
    return read_session(SESSION).episodes


def write_labels(directory: Path, text: str, name: str = "labels.yaml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def positive_labels(directory: Path, episodes: list[RecordedEpisode], name: str = "labels.yaml") -> Path:
    return write_labels(
        directory,
        "".join(f'- request: "{episode.request_id}"\n  target: true\n' for episode in episodes),
        name,
    )


def kept_steps(episode: RecordedEpisode) -> list[Any]:
    """The steps that judged a new image, one per sector (the later one), in step order: what the survey keeps."""
    kept: dict[int, Any] = {}
    for step in episode.verdict.transcript:
        if not step.duplicate_view:
            kept.pop(step.sector, None)
            kept[step.sector] = step
    return list(kept.values())


# -- the sample session ------------------------------------------------------------------------------------


def test_the_sample_session_surveys_as_recorded_and_every_claim_holds_for_the_target(
    sample: list[RecordedEpisode], tmp_path: Path
) -> None:
    labels = load_labels(positive_labels(tmp_path, sample))
    assert [label.request for label in labels.values()] == [episode.request_id for episode in sample]

    pairs, notes = survey_bags([SESSION], labels)

    assert notes == []
    assert len(pairs) == len(sample)
    for index, (pair, episode) in enumerate(zip(pairs, sample, strict=True)):
        verdict = episode.verdict
        assert (pair.index, pair.pair_type, pair.label) == (index, "positive", 1)
        # the sample was recorded with the reference fusion: no claim kinds in the bag, read from the phrases
        assert all(attribute.claim_kind == "" for attribute in verdict.attributes)
        assert pair.claims == tuple(
            (a.name, claim_kind(a.evidence_phrase, a.name), view_hint(a.evidence_phrase))
            for a in verdict.attributes
        )
        kept = kept_steps(episode)
        distinct_poses = {step.sector for step in verdict.transcript if not step.duplicate_view}
        assert len(pair.views) == len(distinct_poses)
        assert [view.sector for view in pair.views] == [step.sector for step in kept]
        for view, step in zip(pair.views, kept, strict=True):
            box = step.crop_box
            assert step.has_crop_box  # ground-truth boxes in this session
            assert view.quality == view_quality(
                (int(box.x_min), int(box.y_min), int(box.x_max), int(box.y_max))
            )
            assert view.weight == pytest.approx(step.detection_confidence)
            assert view.view_type == ""
            asked = [(row.name, Decision(row.last_answer)) for row in step.attributes if row.last_answer]
            assert [(answer.name, answer.answer) for answer in view.answers] == asked
            kinds = {name: kind for name, kind, _ in pair.claims}
            for answer in view.answers:
                assert answer.kind == kinds[answer.name]
                assert answer.holds is True
                assert answer.about_object is False and answer.visible is False
        assert set(pair.holds.values()) == {True}

    # what bags/README.md says of the sample: one request, 6 steps, two of them re-showing the image of a failed
    # move, four poses, the logo claim placed on one side of the mug
    (pair,) = pairs
    assert len(sample[0].verdict.transcript) == 6 and len(pair.views) == 4
    assert dict((name, hint) for name, _, hint in pair.claims)["logo"] == "sided"


def test_a_positive_and_a_look_alike_of_the_same_session_fit_a_calibration_table(
    sample: list[RecordedEpisode], tmp_path: Path
) -> None:
    """The fit needs both labels; the one sample session stands in for the target and, labelled again, for a
    look-alike that differs in its logo."""
    (episode,) = sample
    positive, _ = survey_bags([SESSION], load_labels(positive_labels(tmp_path, sample, "target.yaml")))
    look_alike_file = write_labels(
        tmp_path,
        f'- request: "{episode.request_id}"\n  target: false\n  same_category: true\n  fails: [logo]\n',
        "look_alike.yaml",
    )
    negative, notes = survey_bags([SESSION], load_labels(look_alike_file))
    assert notes == []
    (pair,) = negative
    assert (pair.pair_type, pair.label) == ("neg_same", 0)
    assert pair.holds == {name: name != "logo" for name, _, _ in pair.claims}

    pairs: list[SurveyPair] = positive + negative
    fitted = fit_backend(pairs)

    kinds = {kind for p in pairs for _, kind, _ in p.claims}
    qualities = {view.quality for p in pairs for view in p.views}
    assert {kind for kind, _ in fitted.table.cells} == kinds | {CATEGORY_KIND}
    assert {quality for _, quality in fitted.table.cells} == qualities
    # the logo answers of the look-alike are the cell's answers about a claim that fails
    logo_answers = [a.answer for view in pair.views for a in view.answers if a.name == "logo"]
    quality = pair.views[0].quality
    fails = fitted.table.cells[("logo", quality)].fails
    assert (fails.yes, fails.no, fails.unsure) == tuple(logo_answers.count(d) for d in Decision)
    # no answer in a bag is marked as a category check: the category cells only see Unsure
    category = fitted.table.cells[(CATEGORY_KIND, quality)]
    assert category.holds.yes == category.holds.no == 0 and category.holds.unsure == 8
    assert fitted.model.target_share == pytest.approx(0.5)
    assert fitted.model.other_category_share == 0.0
    assert fitted.facts["pairs"] == 2 and fitted.facts["views"] == 8
    assert fitted.table.evidence_scale > 0


# -- labels files ------------------------------------------------------------------------------------------


BAD_LABELS = [
    ("a mapping", "request: a\ntarget: true\n", None, "expected a list of entries"),
    ("empty", "", None, "got nothing"),
    ("an empty list", "[]\n", None, "the list of entries is empty"),
    ("not YAML", "- request: [a\n", None, "not valid YAML"),
    ("entry not a mapping", "- just-an-id\n", "entry 1, line 1", "expected a mapping"),
    (
        "unknown key",
        '- request: "r1"\n  tagret: true\n',
        "entry 1, line 1 (request 'r1')",
        "unknown key(s) 'tagret'",
    ),
    ("missing request", "- target: true\n", "entry 1, line 1", "missing 'request'"),
    ("request a number", "- request: 12345\n  target: true\n", "entry 1", "'request' must be non-empty text"),
    ("empty request", '- request: ""\n  target: true\n', "entry 1", "'request' must be non-empty text"),
    ("missing target", '- request: "r1"\n', "(request 'r1')", "missing 'target'"),
    (
        "target not a bool",
        '- request: "r1"\n  target: maybe\n',
        "(request 'r1')",
        "'target' must be true or false",
    ),
    (
        "duplicate request",
        '- request: "r1"\n  target: true\n- request: "r1"\n  target: false\n  same_category: false\n',
        "entry 2, line 3 (request 'r1')",
        "listed twice (first as entry 1, line 1)",
    ),
    (
        "target false without same_category",
        '- request: "r1"\n  target: false\n',
        "(request 'r1')",
        "needs 'same_category'",
    ),
    (
        "same_category with target true",
        '- request: "r1"\n  target: true\n  same_category: true\n',
        "(request 'r1')",
        "'same_category' only applies with target: false",
    ),
    (
        "same_category not a bool",
        '- request: "r1"\n  target: false\n  same_category: "same"\n',
        "(request 'r1')",
        "'same_category' must be true or false",
    ),
    (
        "fails with target true",
        '- request: "r1"\n  target: true\n  fails: [logo]\n',
        "(request 'r1')",
        "'fails' only applies with target: false and same_category: true",
    ),
    (
        "fails with another category",
        '- request: "r1"\n  target: false\n  same_category: false\n  fails: [logo]\n',
        "(request 'r1')",
        "'fails' only applies with same_category: true",
    ),
    (
        "fails not a list",
        '- request: "r1"\n  target: false\n  same_category: true\n  fails: logo\n',
        "(request 'r1')",
        "'fails' must be a list",
    ),
    (
        "fails name a number",
        '- request: "r1"\n  target: false\n  same_category: true\n  fails: [logo, 3]\n',
        "(request 'r1')",
        "'fails' names must be non-empty text, got 3",
    ),
    (
        "fails name a mapping",
        '- request: "r1"\n  target: false\n  same_category: true\n  fails: [{name: logo}]\n',
        "(request 'r1')",
        "'fails' names must be non-empty text",
    ),
    (
        "fails name repeated",
        '- request: "r1"\n  target: false\n  same_category: true\n  fails: [logo, logo]\n',
        "(request 'r1')",
        "'fails' lists 'logo' more than once",
    ),
    (
        "second entry wrong",
        '- request: "r1"\n  target: true\n\n- request: "r2"\n  target: no\n  colour: red\n',
        "entry 2, line 4 (request 'r2')",
        "unknown key(s) 'colour'",
    ),
]


@pytest.mark.parametrize(
    ("text", "where", "problem"), [case[1:] for case in BAD_LABELS], ids=[case[0] for case in BAD_LABELS]
)
def test_a_bad_labels_file_is_refused_with_one_line_naming_the_file_the_entry_and_the_problem(
    tmp_path: Path, text: str, where: str | None, problem: str
) -> None:
    path = write_labels(tmp_path, text)
    with pytest.raises(LabelsError) as caught:
        load_labels(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"labels file {path}: "), message
    assert problem in message, message
    if where is not None:
        assert where in message, message


def test_a_labels_file_that_cannot_be_read_is_one_line_too(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(LabelsError, match=r"^labels file .*nowhere\.yaml: cannot be read: ") as caught:
        load_labels(path)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_good_labels_file_gives_each_request_its_truth(tmp_path: Path) -> None:
    path = write_labels(
        tmp_path,
        "# the lab's labels\n"
        '- request: "a/1/x"\n  target: true\n'
        '- request: "a/2/y"\n  target: false\n  same_category: true\n  fails: [strap_color, logo]\n'
        '- request: "a/3/z"\n  target: false\n  same_category: true\n'
        '- request: "a/4/w"\n  target: no\n  same_category: false\n',
    )
    labels = load_labels(path)
    assert list(labels) == ["a/1/x", "a/2/y", "a/3/z", "a/4/w"]
    assert [(label.pair_type, label.label) for label in labels.values()] == [
        ("positive", 1),
        ("neg_same", 0),
        ("neg_same", 0),
        ("neg_diff", 0),
    ]
    assert labels["a/2/y"].fails == ("strap_color", "logo")
    assert [labels["a/2/y"].holds(name) for name in ("strap_color", "logo", "body_color")] == [
        False,
        False,
        True,
    ]
    assert labels["a/3/z"].holds("logo") is True  # a look-alike no claim tells apart
    assert labels["a/4/w"].holds("body_color") is False
    assert labels["a/1/x"].holds("anything") is True
    assert labels["a/2/y"].source == f"labels file {path}: entry 2, line 4"


# -- labels against the bags -------------------------------------------------------------------------------


def test_a_label_naming_no_recorded_request_is_an_error_naming_it_and_the_file(
    sample: list[RecordedEpisode], tmp_path: Path
) -> None:
    path = positive_labels(tmp_path, sample)
    with path.open("a", encoding="utf-8") as stream:
        stream.write('- request: "00800-Pnu8fTXhpCq/1/typo"\n  target: true\n')
    with pytest.raises(LabelsError) as caught:
        survey_bags([SESSION], load_labels(path))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"labels file {path}: entry {len(sample) + 1}"), message
    assert "'00800-Pnu8fTXhpCq/1/typo'" in message and "recorded in none of the bags" in message
    assert str(SESSION) in message
    assert sample[0].request_id not in message  # the request that was found is not blamed


def test_a_fails_name_the_verdict_does_not_have_is_an_error(
    sample: list[RecordedEpisode], tmp_path: Path
) -> None:
    (episode,) = sample
    path = write_labels(
        tmp_path,
        f'- request: "{episode.request_id}"\n  target: false\n  same_category: true\n  fails: [strap_color]\n',
    )
    with pytest.raises(LabelsError) as caught:
        survey_bags([SESSION], load_labels(path))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"labels file {path}: entry 1"), message
    assert episode.request_id in message and "'strap_color'" in message
    assert "handle_color" in message  # the names it could have been


# -- a bag written here: the rules the sample does not exercise --------------------------------------------


TOPICS = {role.role: role.topic for role in ROLES}
SECOND = 10**9


def _stamp(ns: int) -> Time:
    return Time(sec=ns // SECOND, nanosec=ns % SECOND)


def _image(stamp_ns: int) -> bytes:
    message = Image(height=2, width=2, encoding="rgb8", step=6, data=bytes(range(12)))
    message.header.stamp = _stamp(stamp_ns)
    return bytes(serialize_message(message))


def _goal(request_id: str, start_ns: int) -> bytes:
    goal = VerifyInstance.Goal(
        request_id=request_id, episode_key=request_id, descriptions=["a mug with a red strap"]
    )
    goal.start_stamp = _stamp(start_ns)
    return bytes(serialize_message(goal))


def _rows(strap: str, description: str) -> list[AttributeState]:
    return [
        AttributeState(
            name="strap_color",
            type="color",
            evidence_phrase="red strap",
            claim_kind="main_colour",
            last_answer=strap,
        ),
        AttributeState(
            name="desc_1", type="other", evidence_phrase="a mug on its side", last_answer=description
        ),
    ]


def _step(index: int, sector: int, stamp_ns: int, rows: list[AttributeState], **fields: Any) -> StepReport:
    return StepReport(step=index, sector=sector, image_stamp=_stamp(stamp_ns), attributes=rows, **fields)


def write_two_request_bag(directory: Path) -> Path:
    """Request "lab/1": sector 2 (boxed, confidence 0.8), its image again after a failed move, sector 4 (no box,
    the full image judged; the strap not asked), sector 2 again (boxed, other answers). Request "lab/2" was
    recorded without steps (a goal the verifier rejected)."""
    box = Detection2D(x_min=10.7, y_min=20.2, x_max=130.9, y_max=140.0, score=0.8, label="mug")
    steps = [
        _step(
            0,
            2,
            1 * SECOND,
            _rows("Yes", "Unsure"),
            has_crop_box=True,
            crop_box=box,
            detection_confidence=0.8,
        ),
        _step(1, 2, 1 * SECOND, _rows("", ""), duplicate_view=True, has_crop_box=True, crop_box=box),
        _step(2, 4, 2 * SECOND, _rows("", "No"), has_crop_box=False, detection_confidence=0.1),
        _step(
            3, 2, 3 * SECOND, _rows("No", "Yes"), has_crop_box=True, crop_box=box, detection_confidence=0.8
        ),
    ]
    verdict = Verdict(
        request_id="lab/1", decision=Verdict.DECISION_NO, attributes=_rows("No", "Yes"), transcript=steps
    )
    rejected = Verdict(request_id="lab/2", decision=Verdict.DECISION_FAILED, failure_reason="bad goal")
    stream = BagStream(directory / "lab_session", storage="mcap", topics=TOPICS)
    at = iter(range(1, 100))
    stream.write("requests", _goal("lab/1", 1 * SECOND), next(at))
    for stamp in (1 * SECOND, 2 * SECOND, 3 * SECOND):
        stream.write("image", _image(stamp), next(at))
    for step in steps:
        stream.write("steps", serialize_message(step), next(at))
    stream.write("verdicts", serialize_message(verdict), next(at))
    stream.write("requests", _goal("lab/2", 4 * SECOND), next(at))
    stream.write("verdicts", serialize_message(rejected), next(at))
    return stream.close()


def test_poses_boxes_and_claim_kinds_of_a_recorded_request_follow_what_the_fusion_used(
    tmp_path: Path,
) -> None:
    bag = write_two_request_bag(tmp_path)
    labels = {
        "lab/1": BagLabel("lab/1", target=False, same_category=False),
        "lab/2": BagLabel("lab/2", target=True),  # recorded, but without steps: noted, not an error
    }

    pairs, notes = survey_bags([bag], labels)

    assert notes == [f"bag {bag}: request lab/2: no steps were taken (bad goal); not surveyed"]
    (pair,) = pairs
    assert (pair.pair_type, pair.label) == ("neg_diff", 0)
    # the recorded claim kind wins over the phrase ("red strap" reads as a part colour); a whole description
    # is a description claim; the hint still comes from the phrase ("on its side")
    assert pair.claims == (("strap_color", "main_colour", "all_round"), ("desc_1", "description", "sided"))
    # sector 2 was judged twice: the later look replaced the first, so it comes after sector 4
    assert [view.sector for view in pair.views] == [4, 2]
    unboxed, boxed = pair.views
    assert (unboxed.quality, unboxed.weight) == ("full_image", 1.0)
    assert [(a.name, a.answer) for a in unboxed.answers] == [("desc_1", Decision.NO)]
    assert boxed.quality == view_quality((10, 20, 130, 140)) == "large"
    assert boxed.weight == pytest.approx(0.8)
    assert [(a.name, a.kind, a.answer) for a in boxed.answers] == [
        ("strap_color", "main_colour", Decision.NO),
        ("desc_1", "description", Decision.YES),
    ]
    assert pair.holds == {"strap_color": False, "desc_1": False}  # another kind of object: no claim holds


def test_an_unlabelled_request_is_skipped_with_a_note(sample: list[RecordedEpisode], tmp_path: Path) -> None:
    bag = write_two_request_bag(tmp_path)
    path = write_labels(tmp_path, '- request: "lab/1"\n  target: true\n')

    pairs, notes = survey_bags([SESSION, bag, SESSION], load_labels(path))

    assert [(pair.index, pair.pair_type) for pair in pairs] == [(0, "positive")]
    assert notes == [
        *(f"bag {SESSION}: request {episode.request_id!r} has no label; skipped" for episode in sample),
        f"bag {bag}: request lab/2: no steps were taken (bad goal); not surveyed",
        f"bag {SESSION}: given more than once; surveyed once",
    ]
    assert all("\n" not in note for note in notes)


def test_aiv_eval_calibrate_fits_a_table_from_bags_and_labels(
    sample: list[RecordedEpisode], tmp_path: Path
) -> None:
    from aiv_eval.cli import main as aiv_eval
    from aiv_verifier.evidence_tables import load_calibration

    labels = positive_labels(tmp_path, sample)
    out = tmp_path / "lab_calibration.json"
    params = Path(__file__).resolve().parents[2] / "ros2_ws/src/aiv_verifier/config/offline_eval.yaml"
    code = aiv_eval(
        ["calibrate", str(params), "--bags", str(SESSION), "--labels", str(labels), "--out", str(out),
         "--set", "verifier.verifier.calibration_key=classical:lab"]
    )  # fmt: skip
    assert code == 0
    table = load_calibration(out)
    assert list(table.backends) == ["classical:lab"]
    assert table.fitted_on[0].seed is None and "labelled by" in table.fitted_on[0].source
    assert aiv_eval(["calibrate", str(params), "--bags", str(SESSION), "--out", str(out)]) == 2  # no labels
