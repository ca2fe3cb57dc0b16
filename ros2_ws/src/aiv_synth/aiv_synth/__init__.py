"""Synthetic capture pipeline: PInVerify-format datasets generated on the CPU.

Procedural rooms with furniture, 18 categories of part-based objects with attributes (some visible only
from some azimuths), three descriptions per object, same-category distractor families, the paper's App. A
viewpoint sampling and success criteria, and output in exactly the layout the data layer
(:mod:`aiv_dataset`) reads. Entry points: :func:`.pipeline.generate_atomic` and the
``aiv-capture`` CLI (:mod:`.cli`). Submodules are imported on demand so that the CLI starts fast.
"""
