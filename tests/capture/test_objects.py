"""Object catalogue, attributes, distractor families, descriptions and the renderer's labels."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
import pytest
from aiv_dataset.vocabulary import CATEGORIES
from aiv_synth.attributes import (
    differing_attributes,
    make_family,
    plan_instances,
    sample_recipe,
)
from aiv_synth.camera import CameraPose
from aiv_synth.descriptions import attribute_phrase, attribute_records, describe
from aiv_synth.materials import Surface
from aiv_synth.objects import CATALOGUE, build_instance
from aiv_synth.objects.model import NONE, Recipe
from aiv_synth.placement import TARGET_ID
from aiv_synth.renderer import BOX, Primitive, Renderer


def _size(category: str) -> float:
    """Bounding-box volume (litres) of a typical instance."""
    model = build_instance(sample_recipe(CATALOGUE[category], random.Random(0)))
    return float(np.prod(model.upper - model.lower)) * 1000.0


def test_catalogue_covers_the_eighteen_categories_and_builds_them() -> None:
    assert tuple(CATALOGUE) == CATEGORIES
    for category, spec in CATALOGUE.items():
        for seed in range(4):
            recipe = sample_recipe(spec, random.Random(seed))
            model = build_instance(recipe)
            assert model.prims, category
            assert model.lower[1] >= -1e-6, f"{category} pokes through its support"
            for record in attribute_records(spec, recipe):
                for part in record["parts"]:
                    assert part in model.regions, f"{category}.{record['name']} has no region {part}"


def test_relative_sizes_are_realistic() -> None:
    assert _size("keys") < _size("mug") < _size("backpack")
    assert _size("watch") < _size("cellphone") < _size("laptop")
    assert _size("eyeglasses") < _size("teddy bear")
    assert _size("keys") < 0.5 and _size("watch") < 0.5 and _size("backpack") > 10.0


def test_family_members_differ_in_one_or_two_attributes() -> None:
    for category, spec in CATALOGUE.items():
        family = make_family(spec, 4, random.Random(category))
        base = family[0][0]
        for recipe, mutated in family[1:]:
            assert differing_attributes(base, recipe) == [mutated]
        recipes = [r for r, _ in family]
        for i, a in enumerate(recipes):
            for b in recipes[i + 1 :]:
                assert 1 <= len(differing_attributes(a, b)) <= 2


def test_first_variant_changes_a_view_dependent_attribute_where_the_category_has_one() -> None:
    seen_view_dependent = 0
    for spec in CATALOGUE.values():
        family = make_family(spec, 3, random.Random(spec.name))
        base = family[0][0]
        view_dependent = {a.name for a in spec.attributes_for(base.subtype) if a.view_dependent}
        if view_dependent:
            assert family[1][1] in view_dependent
            seen_view_dependent += 1
    assert seen_view_dependent >= 15


def test_planned_instances_are_disjoint_between_splits() -> None:
    val = plan_instances("val", CATEGORIES, 3, 1, 42)
    train = plan_instances("train", CATEGORIES, 3, 1, 42)
    assert len(val) == len(train) == 54
    assert not {i.object_id for i in val} & {i.object_id for i in train}
    assert plan_instances("val", CATEGORIES, 3, 1, 42) == val  # a pure function of the seed


def test_three_descriptions_from_specific_to_vague() -> None:
    for category, spec in CATALOGUE.items():
        recipe = sample_recipe(spec, random.Random(category))
        specific, partial, vague = describe(spec, recipe, random.Random(1))
        assert len(specific) >= len(partial) and len(specific) > len(vague) > 0
        attrs = spec.attributes_for(recipe.subtype)
        main = next(a for a in attrs if a.type == "color" and recipe.has(a.name))
        assert recipe.value(main.name) in specific and spec.noun(recipe.subtype)  # head: main colour + noun
        for attr in attrs:
            value = recipe.value(attr.name)
            if value == NONE or attr is main or attr.type == "material":
                continue
            assert attribute_phrase(attr, value, recipe.subtype) in specific, (category, attr.name)


def test_specific_description_states_an_absent_logo_when_a_sibling_has_one() -> None:
    spec = CATALOGUE["laptop"]
    base = sample_recipe(spec, random.Random(5))
    without = replace(base, values={**base.values, "lid_logo": NONE})
    text = describe(spec, without, random.Random(0), varying={"lid_logo"})[0]
    assert "no logo on the back of the lid" in text


def _render_alone(recipe: Recipe, azimuth_deg: float) -> tuple[np.ndarray, dict[str, int]]:
    """Decal-region image of an instance seen from an azimuth, and its region ids."""
    model = build_instance(recipe)
    prims = [Primitive(BOX, (0.0, -0.05, 0.0), (3.0, 0.05, 3.0), Surface(base=(0.6, 0.6, 0.6)))]
    prims += [replace(p, object_id=TARGET_ID) for p in model.prims]
    centre = model.centre
    a = math.radians(azimuth_deg)
    distance = 0.6 + float(np.linalg.norm(model.upper - model.lower))
    position = (centre[0] + distance * math.cos(a), centre[1] + 0.4, centre[2] + distance * math.sin(a))
    frame = Renderer().render(prims, CameraPose.looking_at(position, centre, -math.atan2(0.4, distance)))
    return frame.decal_regions, model.regions


@pytest.mark.parametrize(
    ("category", "attribute", "seen_from", "hidden_from"),
    [
        ("backpack", "front_logo", 90.0, 270.0),  # the object's front faces azimuth 90 (its local +z)
        ("laptop", "lid_logo", 270.0, 90.0),
        ("mug", "print", 90.0, 270.0),
        ("headphones", "cup_logo", 0.0, 180.0),
        ("cellphone", "back_logo", 270.0, 90.0),
    ],
)
def test_view_dependent_prints_are_invisible_from_the_opposite_side(
    category: str, attribute: str, seen_from: float, hidden_from: float
) -> None:
    spec = CATALOGUE[category]
    recipe = sample_recipe(spec, random.Random(3))
    domain = [v for v in spec.attribute(attribute).domain if v.startswith("logo/star/")]
    recipe = replace(recipe, values={**recipe.values, attribute: domain[0]})
    seen, regions = _render_alone(recipe, seen_from)
    hidden, _ = _render_alone(recipe, hidden_from)
    region = regions[f"decal:{attribute}"]
    assert int((seen == region).sum()) >= 30
    assert int((hidden == region).sum()) == 0


def test_segmentation_mask_is_exactly_the_pixels_the_object_changes() -> None:
    spec = CATALOGUE["teddy bear"]
    model = build_instance(sample_recipe(spec, random.Random(2)))
    room = [
        Primitive(
            BOX,
            (0.0, -0.05, 0.0),
            (3.0, 0.05, 3.0),
            Surface(base=(0.55, 0.5, 0.45), pattern="checks", scale=0.3),
        ),
        Primitive(BOX, (0.0, 1.3, -1.0), (3.0, 1.3, 0.05), Surface(base=(0.85, 0.85, 0.8))),
    ]
    target = [replace(p, object_id=TARGET_ID) for p in model.prims]
    pose = CameraPose.looking_at((0.3, 1.31, 1.4), model.centre, math.radians(-30.0))
    renderer = Renderer()
    with_target = renderer.render(room + target, pose)
    without = renderer.render(room, pose)
    mask = with_target.object_ids == TARGET_ID
    changed = np.any(with_target.rgb != without.rgb, axis=2)
    assert mask.sum() > 2000
    assert np.array_equal(mask, changed)
