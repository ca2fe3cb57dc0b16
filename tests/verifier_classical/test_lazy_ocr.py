"""The OCR engine is built only when an attribute needs text, once, and shared (issue 18, footprint).

Its models and onnxruntime are most of the verifier node's memory; a verifier that judges colours, patterns and
logos must never load them. The engine factory is replaced by a counting one, so no model loads here.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from aiv_checks import ClassicalSettings, ClassicalVerifier, OcrItem
from aiv_checks import verifier as verifier_mod
from aiv_checks.measure import ocr as ocr_mod
from aiv_verifier.core.types import Decision

from verifier_classical.scenes import attr, printed_box, view_of

TEXT_BOX = (40, 240, 320, 400)
WHITE = (245, 245, 242)
NAVY = (25, 35, 95)


class _CountingEngine:
    name = "counting"

    def __init__(self) -> None:
        self.reads = 0

    def read(self, image_rgb: np.ndarray) -> list[OcrItem]:
        self.reads += 1
        return [OcrItem("NOVA", 0.99, (100, 200, 400, 300))]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every engine build the verifier asks for, by choice; each build returns a fresh counting engine."""
    calls: list[str] = []

    def build(choice: str) -> _CountingEngine:
        calls.append(choice)
        return _CountingEngine()

    monkeypatch.setattr(verifier_mod, "shared_ocr_engine", build)
    return calls


def test_views_without_text_claims_never_build_the_engine(builds: list[str]) -> None:
    verifier = ClassicalVerifier(ClassicalSettings(ocr_engine="auto"))
    frame = printed_box(NAVY, WHITE, "NOVA")
    answers = verifier.verify(
        view_of(frame, TEXT_BOX),
        [attr("navy blue"), attr("white stripes", "pattern"), attr("a red star logo", "logo_text")],
    )
    assert answers[0].answer is Decision.YES  # the view was really judged
    assert builds == [] and not verifier.ocr_loaded
    assert verifier.model_calls == 0


def test_the_first_text_claim_builds_it_once(builds: list[str]) -> None:
    verifier = ClassicalVerifier(ClassicalSettings(ocr_engine="auto"))
    frame = printed_box(NAVY, WHITE, "NOVA")
    for _ in range(2):
        (answer,) = verifier.verify(view_of(frame, TEXT_BOX), [attr('the word "NOVA"', "logo_text")])
        assert answer.answer is Decision.YES
    assert builds == ["auto"] and verifier.ocr_loaded
    assert verifier.model_calls == 2


def test_threads_that_need_text_at_once_build_one_engine(builds: list[str]) -> None:
    verifier = ClassicalVerifier(ClassicalSettings(ocr_engine="auto"))
    frame = printed_box(NAVY, WHITE, "NOVA")
    threads = [
        threading.Thread(
            target=verifier.verify, args=(view_of(frame, TEXT_BOX), [attr('"NOVA"', "logo_text")])
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == ["auto"]


def test_a_bad_engine_name_still_fails_at_construction() -> None:
    with pytest.raises(ValueError):
        ClassicalVerifier(ClassicalSettings(ocr_engine="paddle"))


def test_verifiers_share_the_process_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []

    def make(choice: str) -> _CountingEngine:
        built.append(choice)
        return _CountingEngine()

    monkeypatch.setattr(ocr_mod, "make_ocr_engine", make)
    monkeypatch.setattr(ocr_mod, "_SHARED_ENGINES", {})
    first = ocr_mod.shared_ocr_engine("auto")
    assert ocr_mod.shared_ocr_engine("auto") is first
    assert built == ["auto"]


def test_releasing_freed_heap_is_safe_to_call() -> None:
    ocr_mod.release_freed_heap()  # a no-op without glibc; never raises
