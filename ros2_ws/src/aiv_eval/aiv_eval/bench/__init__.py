"""Benchmarks: what a path, a model stage or batching costs, measured rather than estimated.

:mod:`.ros_vs_inprocess` (``aiv-eval bench``) times the ROS path against the in-process path, with
:mod:`.stage_times` attributing the difference per stage and :mod:`.memory` sampling each process tree's PSS;
:mod:`.llm` (``aiv-eval bench-llm``) measures concurrent model calls and episodes in flight against sequential
calls; :mod:`.models` (``aiv-eval bench-models``) the model stages' latency, with the batched-against-one-at-a-time
comparisons of :mod:`.batching` (detector, embeddings) and :mod:`.chat` (the local chat model). :mod:`.cli` adds
all three commands to ``aiv-eval``.

Nothing is imported here: the evaluation modes read :mod:`.stage_times` and must not load the benchmarks with it.
"""
