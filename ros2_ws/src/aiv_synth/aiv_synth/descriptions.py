"""Three descriptions per instance, written from its attributes, with the benchmark's spread of detail.

The benchmark's human descriptions range from specific ("a brown leather backpack with gold details and
two golden buckles") through partial to vague ("a chocolate bag"). We mirror that: the *specific* one
names every attribute (including view-dependent ones, and the absence of a logo or pattern where a family
sibling has one, so that every neg_same pair is decidable from the text), the *partial* one a colour and
one or two details, the *vague* one little more than a colour word and a loose noun.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from .appearance import COLOUR_SLANG, LOGO_SHAPES, PATTERN_NOUNS, article
from .objects.model import NONE, AttrDef, CategorySpec, Recipe, parse_decal, parse_pattern

_COUNT_WORDS = {"2": "two", "3": "three", "4": "four"}
_MATERIAL_WORDS = {"hardcover": "hardcover", "paper": "paperback", "glossy plastic": "glossy"}


def value_phrase(attr: AttrDef, value: str) -> str:
    """The words for an attribute value: 'navy blue', 'white stripes', 'a yellow star logo', ..."""
    if attr.type == "pattern":
        spec = parse_pattern(value)
        assert spec is not None
        kind, colour = spec
        noun = PATTERN_NOUNS[kind]
        phrase = f"{colour} {noun}"
        return f"{article(phrase)} {phrase}" if kind in ("plaid", "floral") else phrase
    if attr.type == "logo_text":
        decal = parse_decal(value)
        assert decal is not None
        kind, content, colour = decal
        if kind == "text":
            return f'the {"number" if content.isdigit() else "word"} "{content}" in {colour}'
        phrase = f"{colour} {LOGO_SHAPES[content]} logo"
        return f"{article(phrase)} {phrase}"
    if attr.type == "count":
        return _COUNT_WORDS.get(value, value)
    if attr.type == "material":
        return _MATERIAL_WORDS.get(value, value)
    return value


def attribute_phrase(attr: AttrDef, value: str, subtype: str) -> str:
    """An attribute as a description fragment, from its template ('black shoulder straps')."""
    v = value_phrase(attr, value)
    text = attr.template.replace("{sub}", subtype)
    if "{a}" in text:
        rest = text.replace("{a} ", "").replace("{v}", v)
        return f"{article(rest)} {rest}"
    return text.replace("{v}", v)


def absence_phrase(attr: AttrDef, subtype: str) -> str:
    """How the specific description states that an optional attribute is absent ('no logo on the back')."""
    text = attr.template.replace("{sub}", subtype).replace("{a} ", "")
    if attr.type in ("logo_text", "pattern"):
        text = text.replace("{v}", "logo" if attr.type == "logo_text" else "pattern")
    else:
        text = text.replace("{v} ", "").replace("{v}", "")
    return f"no {text.strip()}"


_GROUP_WORDS = ("pair of ", "set of ", "bunch of ")


def noun_phrase(adjectives: str, noun: str, *, with_article: bool = True) -> str:
    """'a navy blue backpack', 'a pair of white glasses', 'rose gold keys' (plural nouns take no article)."""
    adjectives = adjectives.strip()
    for group in _GROUP_WORDS:
        if noun.startswith(group):
            inner = f"{adjectives} {noun[len(group) :]}".strip()
            phrase = f"{group}{inner}"
            return f"{article(phrase)} {phrase}" if with_article else phrase
    phrase = f"{adjectives} {noun}".strip()
    if (noun.endswith("s") and not noun.endswith("ss")) or not with_article:
        return phrase
    return f"{article(phrase)} {phrase}"


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _main_colour(spec: CategorySpec, recipe: Recipe) -> tuple[AttrDef, str]:
    for attr in spec.attributes_for(recipe.subtype):
        if attr.type == "color" and recipe.has(attr.name):
            return attr, recipe.value(attr.name)
    raise ValueError(f"{spec.name} has no colour attribute")


def describe(
    spec: CategorySpec, recipe: Recipe, rng: random.Random, varying: Iterable[str] = ()
) -> list[str]:
    """[specific, partial, vague] descriptions of an instance.

    ``varying``: attributes that differ somewhere in the instance's family; if one is absent here, the
    specific description says so.
    """
    varying = set(varying)
    main_attr, main = _main_colour(spec, recipe)
    attrs = spec.attributes_for(recipe.subtype)
    material_attr = next((a for a in attrs if a.type == "material" and a.template == "{v}"), None)
    material = value_phrase(material_attr, recipe.value(material_attr.name)) if material_attr else ""
    details = [
        (attr, attribute_phrase(attr, recipe.value(attr.name), recipe.subtype))
        for attr in attrs
        if attr is not main_attr and attr is not material_attr and recipe.has(attr.name)
    ]
    absent = [
        absence_phrase(attr, recipe.subtype)
        for attr in attrs
        if attr.optional and not recipe.has(attr.name) and attr.name in varying
    ]
    nouns = spec.noun(recipe.subtype)

    # Specific: everything, in a shuffled order, main colour and material up front.
    head = noun_phrase(f"{main} {material}", rng.choice(nouns))
    parts = [p for _, p in details]
    rng.shuffle(parts)
    parts += absent
    connector = rng.choice(("with", "with", "that has", "featuring"))
    specific = head + (f" {connector} {_join(parts)}" if parts else "")

    # Partial: main colour (or material) and one or two details, preferring ones visible from anywhere.
    plain = [p for a, p in details if not a.view_dependent] or [p for _, p in details]
    picked = rng.sample(plain, min(len(plain), rng.choice((1, 1, 2))))
    lead = main if rng.random() < 0.75 or not material else f"{main} {material}"
    partial = noun_phrase(lead, rng.choice(nouns)) + (f" with {_join(picked)}" if picked else "")

    # Vague: a loose colour word and a loose noun, sometimes the material instead of the colour.
    vague_noun = rng.choice(spec.noun(recipe.subtype, vague=True))
    roll = rng.random()
    if roll < 0.45 and main in COLOUR_SLANG:
        word = rng.choice(COLOUR_SLANG[main])
    elif roll < 0.6 and material and material_attr is not None and material_attr.type == "material":
        word = material
    else:
        word = main
    vague = noun_phrase(word, vague_noun)
    return [specific, partial, vague]


def attribute_records(spec: CategorySpec, recipe: Recipe) -> list[dict[str, object]]:
    """The privileged attribute list of an instance (present attributes only)."""
    records = []
    for attr in spec.attributes_for(recipe.subtype):
        value = recipe.value(attr.name)
        if value == NONE:
            continue
        records.append(
            {
                "name": attr.name,
                "type": attr.type,
                "value": value,
                "phrase": attribute_phrase(attr, value, recipe.subtype),
                "parts": list(attr.parts),
                "view_dependent": attr.view_dependent,
                "min_pixels": attr.min_pixels,
            }
        )
    return records


def absent_attribute_records(
    spec: CategorySpec, recipe: Recipe, surfaces: Mapping[str, tuple[str, str]] | None = None
) -> list[dict[str, object]]:
    """The privileged list of the attribute slots an instance lacks (recipe value ``"none"``), catalogue order.

    Written into the ground truth so that the oracles can judge absence claims ("no logo on the back")
    without importing the generator: ``phrase`` is how the specific description states the absence (empty
    for a slot that is not optional, which no description mentions), ``parts`` where the attribute would be.
    ``surface`` (absent logos and prints only): the part and face the print would be on, the *absence
    surface*; each capture lists in ``absent_in_view`` the absent attributes whose surface it shows.
    ``surfaces``: the model's absence surfaces (region ``decal:{name}`` -> (part, face)).
    """
    records: list[dict[str, object]] = []
    for attr in spec.attributes_for(recipe.subtype):
        if recipe.value(attr.name) != NONE:
            continue
        record: dict[str, object] = {
            "name": attr.name,
            "type": attr.type,
            "phrase": absence_phrase(attr, recipe.subtype) if attr.optional else "",
            "parts": list(attr.parts),
            "view_dependent": attr.view_dependent,
            "optional": attr.optional,
        }
        place = (surfaces or {}).get(f"decal:{attr.name}")
        if place is not None:
            record["surface"] = {"part": place[0], "face": place[1], "region": f"decal:{attr.name}"}
        records.append(record)
    return records


def slot_order(spec: CategorySpec, subtype: str) -> list[str]:
    """The names of every attribute slot of a category/subtype in catalogue order (present or absent)."""
    return [attr.name for attr in spec.attributes_for(subtype)]
