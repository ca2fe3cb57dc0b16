"""What is read from finished runs: ``metrics.json``, interval estimates and paired comparisons.

:mod:`.metrics` computes the reference's metrics schema (plus the project's extras) from ``results.jsonl``,
:mod:`.statistics` the Wilson and bootstrap intervals and the McNemar test, :mod:`.compare` the paired comparison
of two runs and the table across many. The ``metrics`` / ``compare`` / ``table`` commands are in
:mod:`aiv_eval.analysis_cli`; the reports that show these numbers are in :mod:`aiv_eval.report`.

Nothing is imported here; the names a caller needs are re-exported by :mod:`aiv_eval` itself.
"""
