"""Instance sampling and same-category distractor families.

neg_same pairs are only informative if the other instance is *nearly* the target: the benchmark's hard
negatives share category and most of the look. Instances are therefore drawn as families: a base recipe
plus variants that each change exactly one attribute of the base (the first variant a view-dependent one
where the category has it), so any two members of a family differ in one or two attributes — sometimes
only in a logo that faces away from most viewpoints.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .appearance import colour_rgb
from .objects import CATALOGUES
from .objects.model import NONE, AttrDef, CategorySpec, Recipe, decal_colour, pattern_colour

#: Minimum RGB distance between a pattern/decal colour and the surface it sits on.
MIN_CONTRAST = 0.4
#: Probability that an optional attribute (pattern, logo, accessory detail) is absent from a base recipe.
P_ABSENT = 0.35


def _value_colour(attr: AttrDef, value: str) -> str | None:
    """The colour name a value paints with (None for materials, shapes, counts and 'none')."""
    if value == NONE:
        return None
    if attr.type == "pattern":
        return pattern_colour(value)
    if attr.type == "logo_text":
        return decal_colour(value)
    if attr.type == "color":
        return value
    return None


def contrasts(a: str | None, b: str | None) -> bool:
    """Whether two named colours are far enough apart to tell a print from its background."""
    if a is None or b is None:
        return True
    ca, cb = colour_rgb(a), colour_rgb(b)
    return math.dist(ca, cb) >= MIN_CONTRAST


def _dependents(spec: CategorySpec, name: str) -> list[AttrDef]:
    return [a for a in spec.attributes if a.base == name]


def _allowed(spec: CategorySpec, attr: AttrDef, value: str, values: dict[str, str]) -> bool:
    """A value is allowed if it contrasts with its base surface and with anything printed on it."""
    colour = _value_colour(attr, value)
    if attr.base is not None and not contrasts(colour, values.get(attr.base)):
        return False
    for dep in _dependents(spec, attr.name):
        if dep.name in values and not contrasts(_value_colour(dep, values[dep.name]), colour):
            return False
    return True


def sample_value(
    spec: CategorySpec, attr: AttrDef, values: dict[str, str], rng: random.Random, exclude: str | None = None
) -> str:
    candidates = [v for v in attr.domain if v != exclude and _allowed(spec, attr, v, values)]
    if not candidates:
        raise ValueError(f"no admissible value for {spec.name}.{attr.name}")
    return rng.choice(candidates)


def sample_recipe(spec: CategorySpec, rng: random.Random, subtype: str | None = None) -> Recipe:
    """A random instance of a category: subtype, size factor and one value per attribute."""
    subtype = subtype or rng.choice(spec.subtypes)
    values: dict[str, str] = {}
    for attr in spec.attributes_for(subtype):
        if attr.optional and rng.random() < P_ABSENT:
            values[attr.name] = NONE
        else:
            values[attr.name] = sample_value(spec, attr, values, rng)
    scale = round(rng.uniform(*spec.scale_range), 3)
    return Recipe(category=spec.name, subtype=subtype, scale=scale, values=values)


def mutate(spec: CategorySpec, recipe: Recipe, attr: AttrDef, rng: random.Random) -> Recipe:
    """The recipe with exactly one attribute changed (an optional one may appear or disappear)."""
    values = dict(recipe.values)
    current = values[attr.name]
    if attr.optional and current != NONE and rng.random() < 0.4:
        values[attr.name] = NONE
    else:
        values[attr.name] = sample_value(spec, attr, values, rng, exclude=current)
    return replace(recipe, values=values)


def differing_attributes(a: Recipe, b: Recipe) -> list[str]:
    """Names of the attributes whose values differ (absent counts as the value 'none')."""
    names = sorted(set(a.values) | set(b.values))
    return [n for n in names if a.values.get(n, NONE) != b.values.get(n, NONE)]


def make_family(spec: CategorySpec, size: int, rng: random.Random) -> list[tuple[Recipe, str | None]]:
    """A base recipe and ``size - 1`` single-attribute variants: [(recipe, mutated attribute or None)]."""
    base = sample_recipe(spec, rng)
    members: list[tuple[Recipe, str | None]] = [(base, None)]
    mutable = [a for a in spec.attributes_for(base.subtype) if a.mutable]
    view_dependent = [a for a in mutable if a.view_dependent]
    unused = list(mutable)
    for i in range(1, size):
        pool = view_dependent if i == 1 and view_dependent else (unused or mutable)
        attr = rng.choice(pool)
        if attr in unused:
            unused.remove(attr)
        members.append((mutate(spec, base, attr, rng), attr.name))
    return members


def object_id(*parts: object) -> str:
    """A 32-hex-digit id in the style of the benchmark's object ids, derived from stable parts."""
    return hashlib.md5("/".join(str(p) for p in parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Instance:
    """One object instance of a split: id, recipe and its place in a distractor family."""

    object_id: str
    split: str
    recipe: Recipe
    family: str
    variant_of: str | None
    mutated: str | None

    @property
    def category(self) -> str:
        return self.recipe.category


def plan_instances(
    split: str,
    categories: Iterable[str],
    family_size: int,
    families: int,
    seed: int,
    catalogue: str = "standard",
) -> list[Instance]:
    """All instances of a split: ``families`` families of ``family_size`` members per category.

    Everything derives from (seed, split, category), so train and val never share an instance and adding
    categories does not change the instances of the others. ``catalogue`` picks the category definitions
    (:data:`.objects.CATALOGUES`); the recipes remember it.
    """
    out: list[Instance] = []
    for category in categories:
        spec = CATALOGUES[catalogue][category]
        for f in range(families):
            rng = random.Random(object_id("family", seed, split, category, f))
            family_id = object_id("family-id", seed, split, category, f)[:12]
            base_id: str | None = None
            for m, (recipe, mutated) in enumerate(make_family(spec, family_size, rng)):
                if catalogue != "standard":
                    recipe = replace(recipe, catalogue=catalogue)
                oid = object_id("object", seed, split, category, f, m)
                out.append(Instance(oid, split, recipe, family_id, base_id, mutated))
                if base_id is None:
                    base_id = oid
    return out
