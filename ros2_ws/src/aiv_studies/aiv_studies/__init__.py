"""Research studies of the weight-free verifier, apart from the packages a robot runs.

They read the synthetic datasets' privileged ground truth, which no run-time package may see, and import the
checks package (``aiv_checks``) directly, which run-time packages find only through its entry point:

- :mod:`.oracle_audit` — what was knowable per episode from the views the agent looked at (for oracle runs);
- :mod:`.classical_study` — how the classical verifier answers per attribute, against the ground truth;
- :mod:`.episode_sweep` — fusions × stop rules over the same episodes, every view judged once.

Run them with ``python -m aiv_studies.<study> --help``. They build on the evaluation (``aiv_eval``: the
in-process episode port, episode keys); no module of ``aiv_eval`` or any other run-time package imports them.
"""
