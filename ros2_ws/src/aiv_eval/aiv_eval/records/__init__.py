"""What a run writes: one validated record per episode, and the store that keeps them.

:mod:`.episode` defines :class:`~.episode.EpisodeRecord` (one line of ``results.jsonl``) with its field checks in
:mod:`.fields`; :mod:`.store` is the append-only, resumable results store (``results.jsonl`` + ``run.json``);
:mod:`.transcripts` and :mod:`.scoring` turn a finished episode from either driver into a record, so a ROS run
and an in-process run write the same bytes. ROS-free: the in-process mode imports this package.

Nothing is imported here; the names a runner needs are re-exported by :mod:`aiv_eval` itself.
"""
