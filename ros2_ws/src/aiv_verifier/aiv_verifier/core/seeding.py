"""Process-independent seeds for every random choice in the core.

The reference seeds its Random NBV with Python's ``hash()``, which is salted per process, so runs are not
repeatable (spec §10.19). Deriving seeds from a cryptographic digest of the parts makes the same
(base seed, episode, step) give the same choice in every process, on every machine.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(base_seed: int, *parts: object) -> int:
    """A seed in [0, 2**31) that depends only on ``base_seed`` and the text of ``parts``."""
    text = "\x1f".join([str(base_seed), *(str(part) for part in parts)])
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % (2**31)


def seeded_rng(base_seed: int, *parts: object) -> random.Random:
    """A private ``random.Random`` (never the global RNG, which other code may also draw from)."""
    return random.Random(derive_seed(base_seed, *parts))
