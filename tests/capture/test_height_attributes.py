"""Attributes that only some camera heights show (the ``elevated`` catalogue), checked in the renders.

The ground truth's ``visible_by_level`` / ``eye_level_hidden`` come from the pixels each render labels, so
these tests render: an underneath attribute (the backpack flap's lining) must show from below and not from
eye level, and on a small generated ``elevated`` split at least a quarter of the positives must have an
attribute that no eye-level view shows and another height does.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from aiv_dataset.levels import level_from_tag
from aiv_synth.attributes import Instance, plan_instances
from aiv_synth.camera import SENSOR_HEIGHT, CameraPose
from aiv_synth.episode import LEVEL_HEIGHTS, attribute_pixels, level_height, visible_attributes
from aiv_synth.materials import Surface
from aiv_synth.objects import ObjectModel, build_instance
from aiv_synth.pipeline import GenerationReport, generate_atomic
from aiv_synth.placement import TARGET_ID
from aiv_synth.presets import get_preset
from aiv_synth.renderer import BOX, Primitive, Renderer, rot_y

#: Top of the table the backpack stands on in the render test (a dining table is 0.72-0.78 m).
TABLE_TOP = 0.75


def _on_table(category: str, yaw: float = 0.0) -> tuple[list[Primitive], Instance, ObjectModel]:
    """World primitives (a table and an elevated-catalogue instance on it, its front toward +z turned by
    ``yaw``) and the instance."""
    instance = plan_instances("val", (category,), 2, 1, 42, "elevated")[0]
    model = build_instance(instance.recipe)
    table = Primitive(BOX, (0.0, TABLE_TOP - 0.02, 0.0), (0.6, 0.02, 0.4), Surface(base=(0.5, 0.4, 0.3)))
    placed = [
        replace(p.transformed(rot_y(yaw), (0.0, TABLE_TOP, 0.0)), object_id=TARGET_ID) for p in model.prims
    ]
    return [table, *placed], instance, model


def _visible_from(
    height: float, distance: float, world: list[Primitive], instance: Instance, model: ObjectModel
) -> list[str]:
    """Attributes a render from ``height`` at ``distance`` in front of the object shows (pixel counts)."""
    goal = (0.0, TABLE_TOP + float(model.centre[1]), 0.0)
    position = (0.0, height, distance)
    pitch = math.atan2(goal[1] - height, distance)
    frame = Renderer().render(world, CameraPose.looking_at(position, goal, pitch))
    mask = frame.object_ids == TARGET_ID
    return visible_attributes(instance, attribute_pixels(frame, mask, instance, model))


@pytest.mark.parametrize("distance", [1.05, 1.55])
def test_flap_lining_shows_from_below_and_not_from_eye_level(distance: float) -> None:
    world, instance, model = _on_table("backpack")
    below = _visible_from(LEVEL_HEIGHTS[-1], distance, world, instance, model)
    eye = _visible_from(SENSOR_HEIGHT, distance, world, instance, model)
    above = _visible_from(level_height(1, "far"), distance, world, instance, model)
    assert "lining_color" in below
    assert "lining_color" not in eye
    assert "lining_color" not in above
    assert "pocket_color" in eye  # the front is in view at eye level: the lining is hidden, not out of frame


@pytest.mark.parametrize(
    ("category", "attribute"),
    [
        ("shoes", "insole_color"),
        ("mug", "inside_color"),
        ("bag", "contents_color"),
        ("toy", "contents_color"),
    ],
)
@pytest.mark.parametrize("yaw", [0.0, 1.2])
def test_what_is_inside_shows_from_the_far_view_above_and_from_no_eye_level_view(
    category: str, attribute: str, yaw: float
) -> None:
    """On a dining table, from the near (0.9 m) and far (1.5 m) ring at eye level the contents are hidden;
    the far ring's raised camera (the view a simulator serves first) shows them."""
    world, instance, model = _on_table(category, yaw)
    assert attribute not in _visible_from(SENSOR_HEIGHT, 0.9, world, instance, model)
    assert attribute not in _visible_from(SENSOR_HEIGHT, 1.5, world, instance, model)
    assert attribute in _visible_from(level_height(1, "far"), 1.55, world, instance, model)


def test_far_ring_raises_the_camera_higher_than_the_near_ring() -> None:
    assert level_height(0, "far") == level_height(0, "near") == SENSOR_HEIGHT
    assert level_height(1, "far") > level_height(1, "near") == LEVEL_HEIGHTS[1]
    assert level_height(-1, "far") == level_height(-1, "near") == LEVEL_HEIGHTS[-1]


@pytest.fixture(scope="module")
def small_elevated(tmp_path_factory: pytest.TempPathFactory) -> GenerationReport:
    out = tmp_path_factory.mktemp("elevated_small") / "pv_dataset"
    return generate_atomic(get_preset("elevated_small"), out, seed=42, workers=2, log=lambda _: None)


def test_a_quarter_of_the_positives_have_an_attribute_no_eye_level_view_shows(
    small_elevated: GenerationReport,
) -> None:
    stats = json.loads((small_elevated.root / "capture_stats.json").read_text())["splits"]["val"]
    hidden = stats["positives_with_eye_level_hidden"]
    assert hidden["positives"] > 0
    assert hidden["with_hidden"] / hidden["positives"] >= 0.25, hidden


def test_the_truth_of_an_underneath_attribute_is_hidden_at_eye_level_and_seen_from_below(
    small_elevated: GenerationReport,
) -> None:
    """Some episode's truth has the lining seen clearly from below and from no eye-level view, and says so."""
    cases = 0
    for path in sorted(small_elevated.root.glob("privileged_gt/*/*.json")):
        truth = json.loads(path.read_text())
        for episode_path, record in truth.get("levels_by_episode", {}).items():
            if "lining_color" not in record["eye_level_hidden"]:
                continue
            captures = truth["captures"][episode_path]
            clear = [
                tag
                for tag, c in captures.items()
                if c["mask_meets_threshold"] and "lining_color" in c["visible"]
            ]
            assert clear and all(level_from_tag(tag) == -1 for tag in clear), clear
            assert "lining_color" in record["visible_by_level"]["-1"]
            cases += 1
    assert cases > 0
