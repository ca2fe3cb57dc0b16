"""The phrase analyser reads what the decomposer writes (and whole descriptions) into checkable claims."""

from __future__ import annotations

import pytest
from aiv_verifier.claims import CLAIM_KINDS, claim_kind
from aiv_verifier.description.phrases import (
    analyse_phrase,
    is_main_colour_claim,
    part_faces_every_side,
    part_is_see_through,
    pattern_faces_every_side,
    split_description,
)


@pytest.mark.parametrize(
    ("phrase", "kind", "colours", "extra"),
    [
        ("light blue", "colour", ["light blue"], {"part": "", "is_main": True}),
        ("a brown brim", "colour", ["brown"], {"part": "brim", "is_main": False}),
        ("a teal band around it", "colour", ["teal"], {"part": "band"}),
        ("purple polka dots", "pattern", ["purple"], {"pattern": "dots"}),
        ("black and white stripes", "pattern", ["black", "white"], {"pattern": "stripes"}),
        ('the word "NOVA" in white', "text", ["white"], {"quoted": ("NOVA",)}),
        ("a yellow star logo", "logo", ["yellow"], {"logo_shape": "star"}),
        ("a cream lightning bolt logo on its chest", "logo", ["cream"], {"logo_shape": "bolt"}),
        ("no logo on the front", "no_logo", [], {}),
        ("no pattern", "no_pattern", [], {"is_main": True}),
        ("no pattern on the brim", "no_pattern", [], {"part": "brim"}),
        ("without stripes", "no_pattern", [], {}),
        ('the word "NO" printed on the side', "text", [], {"quoted": ("NO",)}),
        ("straw", "material", [], {}),
        ("rectangular rims", "shape", [], {}),
        ("two buckles", "count", [], {"count": 2}),
        ("a small gunmetal plate on the right arm", "colour", ["grey"], {"part": "plate"}),
        ("brass metal", "colour", ["gold"], {"is_main": True}),
        ("Navy", "colour", ["navy blue"], {}),
        ("an off-white body", "colour", ["cream"], {"is_main": True}),
    ],
)
def test_phrases_are_read_into_claims(phrase: str, kind: str, colours: list[str], extra: dict) -> None:
    info = analyse_phrase(phrase)
    assert info.kind == kind
    assert [c.name for c in info.colours] == colours
    for key, value in extra.items():
        assert getattr(info, key) == value, key


def test_modifier_without_compound_name_is_kept() -> None:
    (term,) = analyse_phrase("a light green strap").colours
    assert (term.name, term.modifier) == ("green", "light")
    (term,) = analyse_phrase("light blue").colours
    assert (term.name, term.modifier) == ("light blue", "")


def test_description_is_split_into_clauses_keeping_colour_pairs() -> None:
    clauses = split_description(
        "a light blue straw sun hat featuring a brown brim, a teal band around it, purple polka dots and no "
        "logo on the front"
    )
    assert clauses == [
        "a light blue straw sun hat",
        "a brown brim",
        "a teal band around it",
        "purple polka dots",
        "no logo on the front",
    ]
    assert split_description(
        'a white mug with black and white stripes and the word "SALT AND PEPPER" in red'
    ) == [
        "a white mug",
        "black and white stripes",
        'the word "SALT AND PEPPER" in red',
    ]


def test_description_cuts_are_the_readers_option_of_the_one_splitter() -> None:
    """The phrase reader's cuts (DESCRIPTION_CLAUSES) differ from the query's on purpose: fewer clause words, no
    absence or logo claim kept whole, connectives only in lower case, and "black-and-white" cut like the
    spaced form (then glued back as a colour list)."""
    assert split_description("a sticker with the word HELLO that says hi") == [
        "a sticker",
        "the word HELLO that says hi",
    ]
    assert split_description("a red hat With a brown brim And blue dots") == [
        "a red hat With a brown brim And blue dots"
    ]
    assert split_description("a mug that has a handle, which has stripes as well as dots") == [
        "a mug",
        "a handle",
        "stripes",
        "dots",
    ]
    assert split_description("a black-and-white striped shirt") == ["a black- and -white striped shirt"]
    assert split_description('the word"NOVA"in white') == ['the word "NOVA" in white']


def test_one_negation_list_for_both_readers() -> None:
    """The query side's negations and pattern nouns are the phrase reader's too (lexicon.NEGATIONS,
    lexicon.PATTERN_NOUNS)."""
    assert analyse_phrase("not striped").kind == "no_pattern"
    assert analyse_phrase("no motifs").kind == "no_pattern"
    assert analyse_phrase("never a logo").kind == "no_logo"
    assert analyse_phrase("plain, no logo").kind == "no_logo"


def test_attribute_name_can_mark_a_part() -> None:
    info = analyse_phrase("brown")
    assert is_main_colour_claim(info, "body_color")
    assert not is_main_colour_claim(info, "brim_color")
    assert not is_main_colour_claim(analyse_phrase("a brown brim"), "color")


@pytest.mark.parametrize(
    "phrase", ["x" * 10_000, "🎩 ünïcödé «ÉCRIT» — 日本語の帽子", "", "\x00\x01", '"' * 50]
)
def test_odd_phrases_do_not_raise(phrase: str) -> None:
    info = analyse_phrase(phrase)
    assert info.kind in {"unknown", "text", "colour"}
    split_description(phrase)


@pytest.mark.parametrize(
    ("phrase", "every_side", "see_through"),
    [
        ("a brown brim", True, False),
        ("lavender laces", False, False),
        ("blue arms", False, False),
        ("a teal band around it", True, False),
        ("a white strap", True, False),
        ("a pink front pocket", False, False),
        ("an orange wallpaper on the screen", False, False),
        ("a grey spine", False, False),
        ("a beige handle", False, False),
        ("a small rose gold plate on the right arm", False, False),
        ("teal shoulder straps", False, False),
        ("a purple bow", False, False),
        ("a gold dial on top", False, False),
        ("green lenses", True, True),
        ("a blue lens", False, False),  # a camera's lens looks one way
        ("a dark red body", False, False),
        ("light blue", False, False),
    ],
)
def test_which_parts_every_side_shows(phrase: str, every_side: bool, see_through: bool) -> None:
    info = analyse_phrase(phrase)
    assert part_faces_every_side(info) is every_side
    assert part_is_see_through(info) is see_through


@pytest.mark.parametrize(
    ("phrase", "every_side"),
    [
        ("blue stripes", True),
        ("grey checks", True),
        ("blue stripes on the brim", True),
        ("yellow stripes on the arms", False),
        ("white flower print on the front cover", False),
        ("dark red plaid pattern on the back of the case", False),
    ],
)
def test_which_patterns_every_side_shows(phrase: str, every_side: bool) -> None:
    assert pattern_faces_every_side(analyse_phrase(phrase)) is every_side


@pytest.mark.parametrize(
    ("phrase", "attribute_name", "kind"),
    [
        ("teal", "color", "main_colour"),
        ("a dark red body", "color", "main_colour"),
        ("olive green dial", "dial_color", "part_colour"),
        ("brown", "brim_color", "part_colour"),  # the attribute's name makes a bare colour a part's
        ("yellow polka dots", "pattern", "pattern"),
        ("no pattern", "pattern", "no_pattern"),
        ('the word "RUMI" in pink on the front', "text", "text"),
        ("green star logo on the right ear cup", "logo", "logo"),
        ("no logo on the flap", "logo", "no_logo"),
        ("leather", "material", "material"),
        ("round rims", "rim_shape", "shape"),
        ("three keys", "key_count", "count"),
        ("", "color", "unknown"),
        (None, "color", "unknown"),
    ],
)
def test_each_attribute_has_one_claim_kind(phrase: object, attribute_name: str, kind: str) -> None:
    assert claim_kind(phrase, attribute_name) == kind
    assert kind in CLAIM_KINDS
