"""Rule-based decomposition: exact attributes for synthetic and hand-written descriptions, verbatim evidence,
merging across descriptions, duplicate naming, weights, absence claims and the zero-attribute case."""

from __future__ import annotations

import pytest
from aiv_verifier.core.types import ATTRIBUTE_TYPES
from aiv_verifier.query.rules import RuleBasedDecomposer

from .conftest import synthetic_descriptions

DECOMPOSER = RuleBasedDecomposer()


def table(descriptions: list[str]) -> list[tuple[str, str, int, str]]:
    return [(a.name, a.type, a.weight, a.evidence_phrase) for a in DECOMPOSER.decompose(descriptions)]


# --- exact decompositions -----------------------------------------------------------------------------------


def test_synthetic_hat_object_colour_parts_pattern_and_absence() -> None:
    assert table(
        [
            "a light blue straw sun hat featuring a brown brim, a teal band around it, purple polka dots and no "
            "logo on the front",
            "a light blue sun hat with a brown brim",
            "a sky blue cap",
        ]
    ) == [
        ("color", "color", 2, "light blue"),
        ("material", "material", 1, "straw"),
        ("brim_color", "color", 2, "brown brim"),
        ("band_color", "color", 2, "teal band around it"),
        ("pattern", "pattern", 3, "purple polka dots"),
        ("logo", "logo_text", 1, "no logo on the front"),
    ]


def test_synthetic_laptop_text_on_a_sticker_and_located_absence() -> None:
    assert table(
        [
            "a brown plastic notebook computer with a blue wallpaper on the screen, a silver keyboard, a sticker "
            'with the word "MANGO" in cream on the lid and no logo on the back of the lid',
            "a brown laptop with a silver keyboard",
            "a plastic notebook",
        ]
    ) == [
        ("color", "color", 2, "brown"),
        ("material", "material", 1, "plastic"),
        ("wallpaper_color", "color", 2, "blue wallpaper on the screen"),
        ("keyboard_color", "color", 2, "silver keyboard"),
        ("lid_text", "logo_text", 3, 'sticker with the word "MANGO" in cream on the lid'),
        ("lid_logo", "logo_text", 1, "no logo on the back of the lid"),
    ]


def test_synthetic_eyeglasses_part_patterns_plurals_and_shapes() -> None:
    assert table(
        [
            "a pair of brown spectacles that has a small gunmetal plate on the right arm, yellow stripes on the "
            "arms, green lenses, blue arms and rectangular rims",
            "a pair of brown glasses with yellow stripes on the arms",
            "brown eyeglasses",
        ]
    ) == [
        ("color", "color", 2, "brown"),
        ("plate_color", "color", 2, "gunmetal plate on the right arm"),
        ("arm_pattern", "pattern", 3, "yellow stripes on the arms"),
        ("lens_color", "color", 2, "green lenses"),
        ("arm_color", "color", 2, "blue arms"),
        ("rim_shape", "shape", 2, "rectangular rims"),
    ]


def test_synthetic_keys_count_shape_logo_and_class_word_parts() -> None:
    assert table(
        [
            "a bunch of brass keys with four keys, a round fob, a blue heart logo on the fob, teal key heads "
            "and a tan keychain",
            "a bunch of brass keys with a blue heart logo on the fob and a round fob",
            "brass keys",
        ]
    ) == [
        ("color", "color", 2, "brass"),
        ("key_count", "count", 2, "four keys"),
        ("fob_shape", "shape", 2, "round fob"),
        ("fob_logo", "logo_text", 3, "blue heart logo on the fob"),
        ("key_head_color", "color", 2, "teal key heads"),
        ("keychain_color", "color", 2, "tan keychain"),
    ]


def test_synthetic_toy_number_text_keeps_its_colour_out_of_the_object() -> None:
    rows = table(
        [
            'a white wooden toy car with a dark red roof, cream wheels, the number "5" in navy blue on its '
            "right side and orange stripes",
            "a white toy car with a dark red roof and orange stripes",
            "a wooden toy vehicle",
        ]
    )
    assert rows == [
        ("color", "color", 2, "white"),
        ("material", "material", 1, "wooden"),
        ("roof_color", "color", 2, "dark red roof"),
        ("wheel_color", "color", 2, "cream wheels"),
        ("text", "logo_text", 3, 'number "5" in navy blue on its right side'),
        ("pattern", "pattern", 3, "orange stripes"),
    ]


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        (
            "A blue mug with white floral patterns",
            [("color", "color", 2, "blue"), ("pattern", "pattern", 3, "white floral patterns")],
        ),
        (
            "black leather wallet, has a small gold zipper",
            [
                ("color", "color", 2, "black"),
                ("material", "material", 1, "leather"),
                ("zipper_color", "color", 2, "gold zipper"),
            ],
        ),
        (
            "a grey cat-shaped keychain w/ pink ears",
            [
                ("color", "color", 2, "grey"),
                ("shape", "shape", 2, "cat-shaped"),
                ("ear_color", "color", 2, "pink ears"),
            ],
        ),
        (
            "the bag is navy, made of canvas, with two front pockets and a brown leather strap",
            [
                ("color", "color", 2, "navy"),
                ("material", "material", 1, "canvas"),
                ("front_pocket_count", "count", 2, "two front pockets"),
                ("strap_color", "color", 2, "brown leather strap"),
                ("strap_material", "material", 1, "leather strap"),
            ],
        ),
        (
            "Nike shoes, white w/ a black swoosh logo. laces are grey",
            [
                ("color", "color", 2, "white"),
                ("logo", "logo_text", 3, "black swoosh logo"),
                ("lace_color", "color", 2, "laces are grey"),
            ],
        ),
        (
            "purple hat..no pattern, no logo!! brim is kinda dark",
            [
                ("color", "color", 2, "purple"),
                ("pattern", "pattern", 1, "no pattern"),
                ("logo", "logo_text", 1, "no logo"),
            ],
        ),
        ("On the table there is a red mug", [("color", "color", 2, "red")]),
        (
            "a mug that says BEST DAD in black letters",
            [("text", "logo_text", 3, "says BEST DAD in black letters")],
        ),
        (
            "a light blue teddy bear with a transparent white scarf with red dots",
            [
                ("color", "color", 2, "light blue"),
                ("scarf_color", "color", 2, "transparent white scarf"),
                ("scarf_pattern", "pattern", 3, "red dots"),
            ],
        ),
        (
            "a pair of black and red boots with black and white laces and a galaxy print",
            [
                ("color", "color", 2, "black and red"),
                ("lace_color", "color", 2, "black and white laces"),
                ("pattern", "pattern", 3, "galaxy print"),
            ],
        ),
        (
            "red, white and blue striped beach ball",
            [("pattern", "pattern", 3, "red, white and blue striped")],
        ),
        (
            "a mug without a handle or lid",
            [("handle", "part", 1, "without a handle"), ("lid", "part", 1, "without a handle or lid")],
        ),
        ("a plain white mug", [("pattern", "pattern", 1, "plain"), ("color", "color", 2, "white")]),
        (
            "a hat in dark green with a feather",
            [("color", "color", 2, "dark green"), ("feather", "part", 1, "feather")],
        ),
        (
            "a black Nike backpack with two side pockets and a laptop sleeve",
            [
                ("color", "color", 2, "black"),
                ("brand", "logo_text", 3, "Nike"),
                ("side_pocket_count", "count", 2, "two side pockets"),
                ("laptop_sleeve", "part", 1, "laptop sleeve"),
            ],
        ),
        (
            "its a red backpak,  the zipper is broken and theres a little panda keychain hanging from it",
            [
                ("color", "color", 2, "red"),
                ("panda_keychain", "part", 1, "little panda keychain hanging from it"),
            ],
        ),
        (
            "A BLUE SUEDE BAG WITH A GOLD CLASP",
            [
                ("color", "color", 2, "BLUE"),
                ("material", "material", 1, "SUEDE"),
                ("clasp_color", "color", 2, "GOLD CLASP"),
            ],
        ),
        ("a toy car with 'RACER' on the side", [("text", "logo_text", 3, "'RACER' on the side")]),
        ("I think it is a kind of blackish bag", [("color", "color", 2, "blackish")]),
        ("a red and very shiny mug", [("color", "color", 2, "red")]),
        (
            "red mug white handle",
            [("color", "color", 2, "red"), ("handle_color", "color", 2, "white handle")],
        ),
        (
            "There is a red mug on the table. There's a chip on the rim.",
            [("color", "color", 2, "red"), ("chip", "part", 1, "chip on the rim")],
        ),
    ],
)
def test_hand_written_messy_descriptions(description: str, expected: list[tuple[str, str, int, str]]) -> None:
    assert table([description]) == expected


def test_paper_descriptions_merge_synonyms_and_keep_parts() -> None:
    rows = table(
        [
            "a brown leather backpack with gold details and two golden buckles",
            "a leather backpack with golden finishes",
            "a chocolate bag",
        ]
    )
    assert rows == [
        ("color", "color", 2, "brown"),  # "chocolate" is brown too: merged, evidence from the richest text
        ("material", "material", 1, "leather"),
        ("detail_color", "color", 2, "gold details"),
        ("buckle_count", "count", 2, "two golden buckles"),
        ("buckle_color", "color", 2, "golden buckles"),
        ("finish_color", "color", 2, "golden finishes"),
    ]


# --- evidence is always verbatim ------------------------------------------------------------------------------

MESSY = [
    "A blue mug with white floral patterns",
    "black leather wallet, has a small gold zipper",
    "a grey cat-shaped keychain w/ pink ears",
    "a yellow glovo backpack with white details and black shoulder straps",
    "a yellow cooler with a green logo on it",
    "a white mug with decorations referring to tea, like a teapot with green tea written on it and another with "
    "earl grey written on it",
    "It's a red mug. The handle is white.",
    "Grey headphones 🎧 with rose-gold accents",
    "blue mug\nwhite handle\tand a chip on the rim",
    "a wallet, brown, worn out",
    "blu wallett w/o any logos; it’s got 2 card slots & a coin pocket",
    "the cap is black; has a NY logo in white",
    "Its color is dark blue and it has a white stripe",
    "“SALE” sticker on the front, otherwise plain grey",
]


def _assert_verbatim(descriptions: list[str]) -> None:
    for attribute in DECOMPOSER.decompose(descriptions):
        assert attribute.type in ATTRIBUTE_TYPES and attribute.weight in (1, 2, 3)
        assert attribute.evidence_phrase.strip() == attribute.evidence_phrase
        assert any(attribute.evidence_phrase in text for text in descriptions), (attribute, descriptions)


def test_evidence_is_a_verbatim_substring_on_the_synthetic_db(synthetic_db: dict) -> None:
    for entry in synthetic_db.values():
        _assert_verbatim(entry["descriptions"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_evidence_is_verbatim_on_other_synthetic_seeds(tmp_path, seed: int) -> None:
    import json

    root = synthetic_descriptions(tmp_path, seed=seed)
    db = json.loads((root / "object_descriptions_with_category.json").read_text(encoding="utf-8"))
    total = 0
    for entry in db.values():
        _assert_verbatim(entry["descriptions"])
        total += len(DECOMPOSER.decompose(entry["descriptions"]))
    assert total >= 4 * len(db)  # every synthetic object states several checkable attributes


@pytest.mark.parametrize("description", MESSY)
def test_evidence_is_verbatim_on_messy_text(description: str) -> None:
    _assert_verbatim([description])


def test_every_synthetic_object_gets_a_main_colour_and_unique_names(synthetic_db: dict) -> None:
    for entry in synthetic_db.values():
        attributes = DECOMPOSER.decompose(entry["descriptions"])
        names = [a.name for a in attributes]
        assert len(names) == len(set(names))
        assert any(name == "color" or name.startswith("color_") for name in names), entry["descriptions"]


# --- merging and naming ---------------------------------------------------------------------------------------


def test_repeats_merge_and_evidence_comes_from_the_most_specific_description() -> None:
    rows = table(
        [
            "a cream ceramic mug with a dark red diamond logo printed on the side, a pink inside, a green handle",
            "a cream coffee mug with a pink inside",
            "an off-white cup",
        ]
    )
    assert rows[0] == ("color", "color", 2, "cream")  # "off-white" is the same canonical colour
    assert [row[0] for row in rows].count("inside_color") == 1


def test_genuinely_different_values_get_reference_duplicate_names() -> None:
    rows = table(["a pair of beige glasses with rectangular rims", "light brown specs"])
    assert rows == [
        ("color_1", "color", 2, "beige"),
        ("rim_shape", "shape", 2, "rectangular rims"),
        ("color_2", "color", 2, "light brown"),
    ]


def test_a_refined_value_merges_with_the_plain_one() -> None:
    rows = table(["a hat with polka dots", "a hat with purple polka dots"])
    assert rows == [("pattern", "pattern", 3, "purple polka dots")]


def test_an_unqualified_logo_merges_into_the_located_one() -> None:
    rows = table(["brass keys with a blue heart logo on the fob", "brass keys with a blue heart logo"])
    assert [row[0] for row in rows] == ["color", "fob_logo"]
    assert rows[1][3] == "blue heart logo on the fob"


def test_absence_and_presence_of_the_same_thing_stay_apart() -> None:
    rows = table(
        ["a laptop with a purple star logo on the back of the lid and no a sticker with logo on the lid"]
    )
    assert rows == [
        ("lid_logo_1", "logo_text", 3, "purple star logo on the back of the lid"),
        ("lid_logo_2", "logo_text", 1, "no a sticker with logo on the lid"),
    ]


def test_text_colour_is_not_the_object_colour() -> None:
    assert table(['the word "NOVA" in white']) == [("text", "logo_text", 3, 'word "NOVA" in white')]
    assert table(['a red mug with the word "NOVA" in white']) == [
        ("color", "color", 2, "red"),
        ("text", "logo_text", 3, 'word "NOVA" in white'),
    ]


def test_weights_follow_the_documented_discriminativeness_rule() -> None:
    weights = {
        a.name: a.weight
        for a in DECOMPOSER.decompose(
            [
                'a red leather bag with the word "ZED" on the flap, a star logo, blue stripes, two buckles, a '
                "round clasp, a zipper and no pattern on the strap"
            ]
        )
    }
    assert weights == {
        "color": 2,
        "material": 1,
        "flap_text": 3,
        "logo": 3,
        "pattern": 3,
        "buckle_count": 2,
        "clasp_shape": 2,
        "zipper": 1,
        "strap_pattern": 1,
    }


@pytest.mark.parametrize(
    "descriptions",
    [
        [""],
        ["   "],
        ["asdf qwerty"],
        ["a thing"],
        ["🎧🎧🎧"],
        ["\x00\x07\x1b"],
        [],
        ["", "", ""],
        ["a teddy bear keychain"],
    ],
)
def test_nothing_recognisable_gives_zero_attributes(descriptions: list[str]) -> None:
    assert DECOMPOSER.decompose(descriptions) == ()
