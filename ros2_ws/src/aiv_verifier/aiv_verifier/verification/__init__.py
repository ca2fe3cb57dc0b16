"""Per-view verifiers: given one crop of the candidate object, answer Yes / No / Unsure per attribute."""
