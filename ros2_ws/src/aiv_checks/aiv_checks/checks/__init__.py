"""One module per check of the weight-free verifier, each with its settings dataclass and its rule.

Claim checks take a :class:`aiv_checks.view.Claim` and the view's shared analysis and return a
:class:`aiv_checks.outcome.CheckOutcome`; gates (:mod:`.category`, :mod:`.identity`) take a
:class:`aiv_checks.view.Scene` and return the reason the object is not the described one. Which check judges
which claim kind is decided in :mod:`aiv_checks.registry`.
"""
