"""Words and values that attributes are drawn from: named colours, materials, logo shapes, printed words.

One table serves both sides of an attribute: the renderer turns ``"navy blue"`` into pixels and the
description writer into text, so what is said about an object is exactly what is drawn. Colour names were
chosen to be distinguishable at 360x640 under the renderer's lighting; near-duplicates (e.g. two greys)
are deliberately avoided because a distractor that differs only in an invisible shade would be unfair.
"""

from __future__ import annotations

from .materials import RGB

#: Named colours (sRGB in [0, 1]).
COLOURS: dict[str, RGB] = {
    "black": (0.07, 0.07, 0.08),
    "white": (0.93, 0.93, 0.91),
    "grey": (0.52, 0.53, 0.55),
    "red": (0.80, 0.10, 0.10),
    "dark red": (0.50, 0.06, 0.09),
    "pink": (0.95, 0.52, 0.68),
    "orange": (0.96, 0.48, 0.08),
    "yellow": (0.97, 0.84, 0.12),
    "beige": (0.86, 0.78, 0.60),
    "brown": (0.45, 0.27, 0.13),
    "tan": (0.74, 0.56, 0.36),
    "olive green": (0.42, 0.45, 0.16),
    "green": (0.13, 0.60, 0.22),
    "teal": (0.05, 0.52, 0.52),
    "light blue": (0.52, 0.74, 0.93),
    "blue": (0.10, 0.32, 0.82),
    "navy blue": (0.07, 0.11, 0.36),
    "purple": (0.45, 0.18, 0.62),
    "lavender": (0.72, 0.62, 0.88),
    "cream": (0.96, 0.92, 0.80),
}

#: Metal tones for keys, watch cases, clasps and buckles.
METALS: dict[str, RGB] = {
    "silver": (0.78, 0.79, 0.82),
    "gold": (0.86, 0.68, 0.25),
    "brass": (0.72, 0.58, 0.30),
    "gunmetal": (0.30, 0.31, 0.34),
    "rose gold": (0.86, 0.58, 0.50),
}

#: Lens tints of eyeglasses ("clear" is a pale, slightly blue glass).
LENS_TINTS: dict[str, RGB] = {
    "clear": (0.80, 0.86, 0.90),
    "brown": (0.36, 0.22, 0.12),
    "grey": (0.25, 0.26, 0.28),
    "green": (0.16, 0.34, 0.20),
    "blue": (0.14, 0.28, 0.62),
    "pink": (0.90, 0.50, 0.62),
}

#: Everyday alternatives used by vague descriptions ("a chocolate bag"), per colour.
COLOUR_SLANG: dict[str, tuple[str, ...]] = {
    "brown": ("chocolate", "coffee-coloured", "brownish"),
    "dark red": ("burgundy", "maroon", "wine-coloured"),
    "navy blue": ("dark blue", "navy"),
    "light blue": ("sky blue", "pale blue"),
    "olive green": ("khaki", "olive"),
    "beige": ("sand-coloured", "light brown"),
    "cream": ("off-white", "ivory"),
    "grey": ("gray", "greyish"),
    "teal": ("turquoise", "blue-green"),
    "tan": ("camel", "light brown"),
    "lavender": ("light purple", "lilac"),
    "yellow": ("yellowish", "mustard"),
    "pink": ("pinkish", "rose"),
}

#: Patterns and how descriptions name them (with the pattern colour in front).
PATTERN_NOUNS: dict[str, str] = {
    "stripes": "stripes",
    "dots": "polka dots",
    "checks": "checks",
    "plaid": "plaid pattern",
    "floral": "flower print",
}

#: Logo shapes drawn as decals, with their description noun.
LOGO_SHAPES: dict[str, str] = {
    "star": "star",
    "heart": "heart",
    "circle": "ring",
    "triangle": "triangle",
    "diamond": "diamond",
    "bolt": "lightning bolt",
    "moon": "crescent moon",
    "cross": "cross",
}

#: Made-up brand-like words printed on objects (short, so they stay legible at a distance).
WORDS: tuple[str, ...] = (
    "NOVA",
    "ZEPHYR",
    "KIRO",
    "ATLAS",
    "LUMA",
    "ORBIT",
    "PIKO",
    "VELA",
    "MANGO",
    "TORU",
    "BREZ",
    "ECHO",
    "FJORD",
    "QUILL",
    "RUMI",
    "SOLA",
)

#: Slogans for mugs and books (longer text on bigger faces).
PHRASES: tuple[str, ...] = (
    "GOOD DAY",
    "HELLO",
    "TEA TIME",
    "COFFEE",
    "DREAM BIG",
    "OCEAN",
    "FOREST",
    "SUMMER",
    "NIGHT SKY",
    "MOUNTAIN",
)


def colour_rgb(name: str) -> RGB:
    """RGB of a colour or metal name (raises KeyError for unknown names, on purpose)."""
    if name in COLOURS:
        return COLOURS[name]
    if name in METALS:
        return METALS[name]
    return LENS_TINTS[name.removesuffix(" lenses")]


def darker(rgb: RGB, factor: float = 0.6) -> RGB:
    return (rgb[0] * factor, rgb[1] * factor, rgb[2] * factor)


def article(phrase: str) -> str:
    """'a' or 'an' for a following phrase (by its first letter; good enough for this vocabulary)."""
    return "an" if phrase[:1].lower() in "aeio" else "a"
