"""Tiny model builders: real architectures at toy size, built from configs with locally-made tokenizers.

No weights are downloaded (docs/models.md): tests and benchmarks build these, ``save_pretrained`` them
into a directory and load them back through the same path a user's checkpoint takes. Each module imports torch
and transformers only inside its functions.
"""
