"""An oracle run is perfect on everything a verifier could know (micro preset, real capture pipeline).

"Perfect verification" is not accuracy 1.0: a distractor may differ only on a side no visited view shows, or in
something the descriptions never mention. The honest property, checked with the independent audit of
:mod:`aiv_studies.oracle_audit`:

- every per-view oracle answer equals the audit's reference answer from the privileged ground truth;
- every episode whose deciding evidence was observed in a verified view is answered correctly (veto fusion);
- every positive is answered Yes, unless no verified view could confirm anything (target never clearly shown);
- no miss is an oracle bug or the fusion overruling the oracle.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiv_studies.oracle_audit import (
    BUG_ORACLE_MISSED,
    FUSION_OVERRULED,
    NOTHING_CHECKABLE,
    ORACLE_BUG_CAUSES,
    TARGET_NEVER_SHOWN,
    EpisodeAudit,
    audit_run,
    run_oracle_episodes,
)
from aiv_verifier.core.types import Decision
from aiv_verifier.verification import oracle

UNKNOWABLE_POSITIVE = frozenset({TARGET_NEVER_SHOWN, NOTHING_CHECKABLE})


def _audit(root: Path, query_mode: str, fusion: str = "veto") -> list[EpisodeAudit]:
    return audit_run(root, run_oracle_episodes(root, fusion=fusion, query_mode=query_mode))


def _violations(audits: list[EpisodeAudit]) -> list[str]:
    problems = []
    for audit in audits:
        record = audit.record
        where = f"{record.key} [{record.pair_type}] predicted {record.prediction.value}"
        problems += [f"{where}: {mismatch}" for mismatch in audit.mismatches]
        if audit.evidence_observed and not audit.correct:
            problems.append(f"{where}: deciding evidence observed but wrong ({audit.cause}: {audit.detail})")
        positive_missed = record.pair_type == "positive" and record.prediction is not Decision.YES
        if positive_missed and audit.cause not in UNKNOWABLE_POSITIVE:
            problems.append(f"{where}: positive not answered Yes ({audit.cause}: {audit.detail})")
        if audit.cause in ORACLE_BUG_CAUSES or audit.cause == FUSION_OVERRULED:
            problems.append(f"{where}: {audit.cause}: {audit.detail}")
    return problems


@pytest.mark.parametrize("query_mode", ["attribute", "direct"])
def test_oracle_with_veto_is_perfect_on_everything_observed(micro_root: Path, query_mode: str) -> None:
    audits = _audit(micro_root, query_mode)
    assert _violations(audits) == []
    # Not vacuous: every pair type is there and most episodes had their deciding evidence in view.
    assert {a.record.pair_type for a in audits} == {"positive", "neg_same", "neg_diff"}
    assert sum(a.evidence_observed for a in audits) >= len(audits) // 2
    assert any(a.evidence_observed and a.record.pair_type == "neg_same" for a in audits)
    assert all(a.correct for a in audits if a.record.pair_type == "positive" and a.evidence_observed)


def test_reference_fusion_misses_are_the_fusion_not_the_oracle(micro_root: Path) -> None:
    """attr_majority lets a one-attribute distractor win the vote; the audit must blame the fusion for that."""
    audits = _audit(micro_root, "attribute", fusion="attr_majority")
    wrong = [a for a in audits if not a.correct]
    assert all(not a.mismatches for a in audits)
    assert all(a.cause not in ORACLE_BUG_CAUSES for a in wrong)
    assert all(a.cause == FUSION_OVERRULED for a in wrong if a.evidence_observed)


def test_the_audit_catches_an_oracle_that_misses_a_difference(
    micro_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Negative control: an oracle that never says No on an attribute is flagged, so the check above can fail."""
    original = oracle._compare

    def blind_to_differences(*args: object, **kwargs: object) -> Decision:
        answer = original(*args, **kwargs)  # type: ignore[arg-type]
        return Decision.UNSURE if answer is Decision.NO else answer

    monkeypatch.setattr(oracle, "_compare", blind_to_differences)
    audits = _audit(micro_root, "attribute")
    problems = _violations(audits)
    assert problems, "a broken oracle went unnoticed"
    assert any(a.mismatches for a in audits)
    assert any(a.cause == BUG_ORACLE_MISSED for a in audits if a.record.pair_type == "neg_same")
