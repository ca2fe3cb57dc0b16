"""Answers of every next-best-view strategy on a grid of one-level requests, for the golden comparison.

``test_nbv_levels.py`` compares what the code answers now with ``fixtures/nbv_one_level_golden.json``, which this
module wrote from the code before height levels existed (commit bea2222), so a one-level episode is proven to
get today's answers bit for bit: directions, targets, reasons, debug scores and the LLM prompts. To rewrite the
fixture from an old tree (only when the one-level answers are meant to change)::

    git archive bea2222 ros2_ws/src/aiv_verifier | tar -x -C /tmp/old
    python tests/verifier_core/one_level_golden.py /tmp/old/ros2_ws/src/aiv_verifier
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "nbv_one_level_golden.json"
GOAL = (1.0, 0.5, -2.0)
#: Capture azimuths with the jitter of real captures; sector 4 has no capture (a synthetic azimuth).
AZIMUTHS = {0: 3.0, 1: 58.0, 2: 125.0, 3: 181.0, 5: 297.0}


def _geometry(core: Any) -> Any:
    captures = []
    for sector, degrees in AZIMUTHS.items():
        for view_type, radius in (("far", 1.8), ("near", 1.1)):
            angle = math.radians(degrees + (4.0 if view_type == "near" else 0.0))
            position = (GOAL[0] + radius * math.cos(angle), 1.31, GOAL[2] + radius * math.sin(angle))
            captures.append(core.sector_geometry.SectorCapture(sector, view_type, position))
    return core.sector_geometry.SectorGeometry.from_records(captures, GOAL)


class _Model:
    """A scripted language model: answers one direction name (a planar one, "up", or junk)."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def generate(self, prompt: str, images: list[Any]) -> str:
        return json.dumps({"chosen_direction": self.answer})


def _plain(value: Any) -> Any:
    """JSON-able form of a choice's debug (dict keys to text, tuples to lists)."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, float):
        return round(value, 9)
    return value


def answers(core: Any) -> list[dict[str, Any]]:
    """Every strategy's answer on the grid; ``core`` is a namespace with the verifier's core modules."""
    nbv = core.nbv
    geometry = _geometry(core)
    visibility = core.evidence_tables.load_visibility(core.evidence_tables.DEFAULT_VISIBILITY_FILE).model
    evidence_mod, evidential = core.evidence, core.evidential
    reliable = evidence_mod.ReliabilityCell(
        evidence_mod.AnswerCounts(900, 10, 90), evidence_mod.AnswerCounts(10, 900, 90)
    )
    table = evidence_mod.ReliabilityTable({(kind, "large"): reliable for kind in ("main_colour", "logo")})
    model = evidence_mod.TargetModel(1 / 3, 0.5, 0.0, 0.2)
    yes, unsure = core.types.Decision.YES, core.types.Decision.UNSURE
    out: list[dict[str, Any]] = []
    visited_sets = [frozenset(c) for n in (1, 2, 3, 5, 6) for c in itertools.combinations(range(6), n)][::6]
    for current, visited, failed_pick, with_geometry in itertools.product(
        range(6), visited_sets, (False, True), (False, True)
    ):
        visited = visited | {current}
        failed = frozenset(sorted(visited - {current})[:1]) if failed_pick else frozenset()
        ledger = evidential.EvidenceLedger(
            [evidential.ClaimItem("body", "main_colour"), evidential.ClaimItem("logo", "logo", "sided")],
            table,
            model,
        )
        for sector in sorted(visited - failed):
            ledger.record(
                (sector, f"s{sector}_far"),
                [evidential.ClaimAnswer("body", yes), evidential.ClaimAnswer("logo", unsure)],
                quality="large",
            )
        request = nbv.NbvRequest(
            episode_key=f"scene/ep{current}",
            step=len(visited),
            current_sector=current,
            visited=visited,
            failed=failed,
            geometry=geometry if with_geometry else None,
            descriptions=("A navy backpack.", "It has a white logo on the back.", "The strap is black."),
            object_category="backpack",
            sector_visibility={sector: sector % 2 == 0 for sector in visited},
            failed_direction="back" if failed_pick else None,
            evidence=ledger,
        )
        strategies = [
            ("random", nbv.RandomNbv()),
            ("farthest", nbv.FarthestNbv()),
            ("uncertainty", core.nbv_uncertainty.UncertaintyNbv(visibility)),
            ("llm-up", nbv.LlmNbv(_Model("up"))),
            ("llm-back", nbv.LlmNbv(_Model("back-left"))),
        ]
        for name, strategy in strategies:
            choice = strategy.choose(request)
            record = {
                "direction": choice.direction,
                "target": choice.target_index,
                "reason": choice.reason,
                "debug": _plain(choice.debug),
            }
            # By digest (the debug holds scores, gains and whole prompts), to keep the fixture small.
            digest = hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()[:16]
            case = f"{name} s{current} v{''.join(map(str, sorted(visited)))} f{''.join(map(str, sorted(failed)))}"
            out.append(
                {"case": case + (" geo" if with_geometry else ""), "move": choice.direction, "sha": digest}
            )
    return out


def core_modules() -> Any:
    """The verifier's core modules as imported now (the old tree's when its path comes first)."""
    from types import SimpleNamespace

    from aiv_verifier import evidence_tables
    from aiv_verifier.core import evidence, evidential, nbv, nbv_uncertainty, sector_geometry, types

    return SimpleNamespace(
        nbv=nbv,
        nbv_uncertainty=nbv_uncertainty,
        sector_geometry=sector_geometry,
        evidence=evidence,
        evidential=evidential,
        evidence_tables=evidence_tables,
        types=types,
    )


if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    FIXTURE.parent.mkdir(exist_ok=True)
    lines = [json.dumps(entry, sort_keys=True) for entry in answers(core_modules())]
    FIXTURE.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    print(f"wrote {FIXTURE}")
