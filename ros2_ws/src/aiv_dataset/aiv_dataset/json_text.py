"""Decoding JSON text from dataset files, with the failures the standard decoder lets through refused.

``json.loads`` silently keeps the *last* value of a key that appears twice in one object, so a line such as
``{"label": 0, ..., "label": 1}`` would be read as a positive pair although half of it says negative. Every
dataset reader decodes through :func:`parse_json`, which refuses such objects, and which turns every other
decoding failure (syntax, nesting too deep for the parser, integer literals too long to convert) into a
:class:`~.errors.DatasetError` naming the file, the line and, for a repeated key, the key.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import DatasetError
from .fields import Where


class RepeatedKeyError(DatasetError):
    """A JSON object names one key twice (``field`` is the key). Index readers refuse a whole index for it."""


class _RepeatedKey(Exception):
    """Raised inside the decoder when an object names one key twice (carries the key out of it)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _RepeatedKey(key)
        obj[key] = value
    return obj


def parse_json(text: str, where: Where, *, whole_file: bool = False) -> Any:
    """Decode ``text``; any failure is a :class:`DatasetError` located at ``where``.

    ``whole_file`` says that ``text`` is a complete file, so a syntax error is reported on the decoder's line
    number; for one JSONL line, ``where`` already carries the line and the decoder's column is given instead.
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except _RepeatedKey as repeated:
        located = where.at(repeated.key)
        raise RepeatedKeyError(
            "this key appears twice in one JSON object; refusing to guess which value is meant",
            path=located.path,
            line=located.line,
            field=located.field,
        ) from None
    except json.JSONDecodeError as exc:
        reason = f"invalid JSON: {exc.msg} (column {exc.colno})"
        if whole_file:
            raise DatasetError(reason, path=where.path, line=exc.lineno) from None
        raise where.error(reason) from None
    except RecursionError:
        raise where.error("invalid JSON: values nested too deeply to decode") from None
    except ValueError as exc:  # e.g. an integer literal longer than the interpreter converts
        raise where.error(f"invalid JSON: {exc}") from None
