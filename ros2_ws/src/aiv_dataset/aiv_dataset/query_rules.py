"""The rules a query's descriptions must satisfy before anyone works on them.

The simulator hands descriptions out, the verifier accepts them in a goal, and the evaluator sends them;
each applies these same rules, so a query that one part accepts is never refused by another, and a refusal
reads the same wherever it happens. The check is cheap and runs before any work, so a bad query costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

NUL = "\x00"


def description_problem(descriptions: Sequence[str], max_descriptions: int, max_chars: int) -> str | None:
    """Why these descriptions cannot be served, as one line, or None when they can.

    Refused: no description with visible text (an empty list, or only empty or blank strings), no description
    with a letter or a digit (only punctuation, symbols or emoji: "?!", "🙂": nothing an answer could be
    checked against, which would otherwise be answered NO), more than ``max_descriptions`` descriptions, an
    entry that is not text, a description longer than ``max_chars`` characters, and a NUL character: ROS
    string fields end the text there, so a receiver would silently verify a shorter query than the one sent;
    the sender (and the in-process path, which has no transport) must refuse it. Blank (or symbol-only)
    entries next to real ones are kept: a dataset may carry an empty description among three, and the
    reference passes it on unchanged.
    """
    for position, text in enumerate(descriptions, start=1):
        if not isinstance(text, str):
            return f"description {position} is {type(text).__name__}, not text"
    if not any(text.strip() for text in descriptions):
        return "no descriptions: give at least one non-empty description of the object"
    if not any(has_word(text) for text in descriptions):
        shown = ", ".join(_shown(text) for text in descriptions if text.strip())
        return (
            f"no description names anything checkable ({shown}: no letter or digit, only punctuation, symbols "
            "or emoji); give at least one description in words"
        )
    if len(descriptions) > max_descriptions:
        return f"{len(descriptions)} descriptions; at most {max_descriptions} are accepted"
    longest = max(len(text) for text in descriptions)
    if longest > max_chars:
        return f"a description has {longest} characters; at most {max_chars} are accepted"
    for position, text in enumerate(descriptions, start=1):
        if NUL in text:
            return f"description {position} contains a NUL character (at offset {text.index(NUL)})"
    return None


def has_word(text: str) -> bool:
    """Whether ``text`` holds a letter or a digit of any script (what a description can be checked by)."""
    return any(character.isalnum() for character in text)


def _shown(text: str, limit: int = 40) -> str:
    """A description quoted for a one-line message (escaped, and cut when long)."""
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
