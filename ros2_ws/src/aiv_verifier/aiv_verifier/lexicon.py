"""Words the description parser's two readers (query decomposition and the verifier's phrase reading) share.

The rule-based decomposer reads a colour, pattern or material word out of a description, and the classical
verifier has to recognise the very same word in pixels; keeping one vocabulary is what guarantees that every
attribute the parser emits is one the verifier at least knows how to attempt. Only words live here: colour
prototypes (pixel values) belong to the vision code, which keys them by the canonical names below.

Canonical colour names are plain English basic colour terms plus a few common compound shades; synonyms and
everyday slang ("burgundy", "navy", "off-white") map onto them. Modifiers ("light", "dark", "pale", ...)
are kept separately so "light blue" can be parsed as (blue, light) when no compound entry exists.
"""

from __future__ import annotations

from types import MappingProxyType

#: Canonical colour names the verifier can name from pixels.
CANONICAL_COLOURS: tuple[str, ...] = (
    "black",
    "white",
    "grey",
    "silver",
    "red",
    "dark red",
    "pink",
    "orange",
    "yellow",
    "gold",
    "beige",
    "cream",
    "brown",
    "tan",
    "olive green",
    "green",
    "teal",
    "light blue",
    "blue",
    "navy blue",
    "purple",
    "lavender",
)

#: Other words people use for a canonical colour (lower case). Multi-word keys are matched before single words.
COLOUR_SYNONYMS: MappingProxyType[str, str] = MappingProxyType(
    {
        "gray": "grey",
        "greyish": "grey",
        "grayish": "grey",
        "charcoal": "grey",
        "gunmetal": "grey",
        "silvery": "silver",
        "chrome": "silver",
        "metallic silver": "silver",
        "burgundy": "dark red",
        "maroon": "dark red",
        "wine-coloured": "dark red",
        "wine-colored": "dark red",
        "crimson": "red",
        "scarlet": "red",
        "reddish": "red",
        "pinkish": "pink",
        "rose": "pink",
        "magenta": "pink",
        "fuchsia": "pink",
        "rose gold": "pink",
        "orangish": "orange",
        "yellowish": "yellow",
        "mustard": "yellow",
        "golden": "gold",
        "brass": "gold",
        "sand-coloured": "beige",
        "sand-colored": "beige",
        "khaki": "olive green",
        "olive": "olive green",
        "off-white": "cream",
        "ivory": "cream",
        "chocolate": "brown",
        "coffee-coloured": "brown",
        "coffee-colored": "brown",
        "brownish": "brown",
        "camel": "tan",
        "light brown": "tan",
        "greenish": "green",
        "turquoise": "teal",
        "blue-green": "teal",
        "cyan": "teal",
        "sky blue": "light blue",
        "pale blue": "light blue",
        "baby blue": "light blue",
        "bluish": "blue",
        "royal blue": "blue",
        "dark blue": "navy blue",
        "navy": "navy blue",
        "violet": "purple",
        "purplish": "purple",
        "light purple": "lavender",
        "lilac": "lavender",
        # additions (query parser): more "-ish" forms and common spellings
        "blackish": "black",
        "whitish": "white",
        "whiteish": "white",
        "blueish": "blue",
        "greeny": "green",
        "goldish": "gold",
        "silverish": "silver",
        "beigeish": "beige",
        "purpleish": "purple",
        "jet black": "black",
        "pitch black": "black",
        "snow white": "white",
        "pure white": "white",
        "forest green": "green",
        "lime green": "green",
        "lime": "green",
        "emerald": "green",
        "emerald green": "green",
        "mint green": "green",
        "sage": "olive green",
        "army green": "olive green",
        "cobalt": "blue",
        "cobalt blue": "blue",
        "denim blue": "blue",
        "indigo": "navy blue",
        "midnight blue": "navy blue",
        "aqua": "teal",
        "peach": "orange",
        "coral": "orange",
        "salmon": "pink",
        "hot pink": "pink",
        "baby pink": "pink",
        "blush": "pink",
        "lemon": "yellow",
        "amber": "orange",
        "bronze": "brown",
        "copper": "brown",
        "caramel": "tan",
        "taupe": "beige",
        "nude": "beige",
        "ecru": "cream",
        "eggshell": "cream",
        "plum": "purple",
        "mauve": "lavender",
    }
)

#: Lightness modifiers; applied to a base colour when no compound name covers the pair.
COLOUR_MODIFIERS: tuple[str, ...] = ("light", "dark", "pale", "bright", "deep", "pastel", "neon", "matte")

#: Pattern kinds the classical verifier looks for, with the words that name them.
PATTERN_WORDS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "stripes": ("stripes", "striped", "stripe", "pinstripes", "bands of colour"),
        "dots": ("polka dots", "polka-dot", "polka dot", "dots", "dotted", "spots", "spotted"),
        "checks": ("checks", "checked", "checkered", "chequered", "checkerboard", "gingham"),
        "plaid": ("plaid", "tartan"),
        "floral": ("flower print", "floral", "flowers", "flowery"),
        "camouflage": ("camouflage", "camo"),
    }
)

#: Material words (lower case) the parser recognises.
MATERIAL_WORDS: tuple[str, ...] = (
    "leather",
    "faux leather",
    "suede",
    "canvas",
    "denim",
    "nylon",
    "polyester",
    "cotton",
    "wool",
    "knitted",
    "straw",
    "felt",
    "fleece",
    "plush",
    "fur",
    "furry",
    "velvet",
    "rubber",
    "plastic",
    "glossy",
    "matte",
    "metal",
    "metallic",
    "aluminium",
    "aluminum",
    "steel",
    "ceramic",
    "porcelain",
    "glass",
    "wooden",
    "wood",
    "paper",
    "paperback",
    "hardcover",
    "cardboard",
    "fabric",
    "mesh",
    # additions (query parser)
    "patent leather",
    "hardback",
    "silk",
    "satin",
    "linen",
    "corduroy",
    "vinyl",
    "silicone",
    "titanium",
    "bamboo",
    "wicker",
    "knit",
    "woven",
    "crocheted",
    "acrylic",
    "neoprene",
    "tweed",
    "terry cloth",
    "jute",
)

#: Shape words (lower case) the parser recognises.
SHAPE_WORDS: tuple[str, ...] = (
    "round",
    "rounded",
    "circular",
    "oval",
    "square",
    "rectangular",
    "triangular",
    "cylindrical",
    "spherical",
    "flat",
    "slim",
    "thin",
    "thick",
    "tall",
    "short",
    "wide",
    "narrow",
    "curved",
    "boxy",
    "cat-eye",
    "aviator",
    "wayfarer",
)

#: Words that announce printed text or a logo.
TEXT_CUES: tuple[str, ...] = (
    "word",
    "words",
    "text",
    "letters",
    "lettering",
    "writing",
    "printed",
    "says",
    "reads",
    # additions (query parser)
    "written",
    "saying",
    "reading",
    "inscription",
    "inscribed",
    "caption",
    "lettered",
    "spelling",
    "spells",
    "initials",
)
LOGO_CUES: tuple[str, ...] = (
    "logo",
    "emblem",
    "badge",
    "brand",
    "symbol",
    "icon",
    "label",
    "patch",
    "sticker",
    # additions (query parser)
    "decal",
    "monogram",
    "insignia",
    "crest",
    "trademark",
)

#: Number words for counts ("two buckles").
COUNT_WORDS: MappingProxyType[str, int] = MappingProxyType(
    {
        "one": 1,
        "single": 1,
        "two": 2,
        "pair": 2,
        "three": 3,
        "four": 4,
        "five": 5,
        "six": 6,
        # additions (query parser)
        "seven": 7,
        "eight": 8,
        "nine": 9,
        "ten": 10,
        "twelve": 12,
        "double": 2,
        "twin": 2,
        "triple": 3,
    }
)

#: Words that mean "absent": "no logo" is a checkable claim (the verifier looks for any logo), "without a
#: handle" one the decomposer writes as an absence. ("plain" says the same of a pattern only; the readers
#: treat it beside these.)
NEGATIONS: frozenset[str] = frozenset({"no", "without", "not", "nothing", "none", "never"})

#: Words for "a pattern" in general: the word before them names the kind ("galaxy print"), and a negation
#: turns them into a plain-surface claim ("no pattern").
PATTERN_NOUNS: frozenset[str] = frozenset(
    {"pattern", "patterns", "patterned", "print", "prints", "printed", "motif", "motifs"}
)


def canonical_colour(word: str) -> str | None:
    """The canonical colour a word or short phrase names ("Navy" → "navy blue"), or None if it is none."""
    text = " ".join(word.lower().replace("colored", "coloured").split())
    if text in CANONICAL_COLOURS:
        return text
    if text in COLOUR_SYNONYMS:
        return COLOUR_SYNONYMS[text]
    return None


#: Simple mark shapes a logo phrase may name ("a yellow star logo"), keyed by the shape the verifier
#: classifies; multi-word names are matched as phrases.
LOGO_SHAPE_WORDS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "star": ("star", "stars"),
        "heart": ("heart", "hearts"),
        "circle": ("circle", "ring", "circular", "round", "dot", "disc", "disk"),
        "triangle": ("triangle", "triangular"),
        "diamond": ("diamond", "rhombus"),
        "square": ("square", "rectangle", "rectangular"),
        "cross": ("cross", "plus"),
        "bolt": ("lightning bolt", "bolt", "lightning"),
    }
)
