"""A calibration survey from a lab's own recorded verification sessions: session bags plus a labels file.

The evidential fusion's calibration (:mod:`.calibration`) counts how a verifier backend's per-view answers
depend on the truth. :mod:`.survey` gets those answers from synthetic datasets whose ground truth is
privileged. A lab that runs the verifier on its own objects, cameras and light has better data: the session
bags its verifier recorded (``--record-bags``, read with :func:`aiv_bags_ros.session_reader.read_session`).
A bag holds every answer the verifier gave but not what was true. A person who knows what was in front of the
robot adds that in a labels file, and this module turns both into :class:`~.survey.SurveyPair` rows that
:func:`~.calibration.fit_backend` accepts as they are.

The labels file
---------------

A YAML list with one entry per recorded request. The request id is the one in the bag (the goal's
``request_id``; ``aiv-bag replay`` and the run's records show it). Each entry says whether the object in
view was the one the request described, and if it was not, how it differed::

    - request: "scene-3/1/4be1d0c2"   # the object in view WAS the described one: every claim holds
      target: true
    - request: "scene-3/2/77a0e913"   # a look-alike of the same kind: it differs in the listed claims
      target: false
      same_category: true
      fails: [strap_color, logo]      # attribute names as the verdict lists them; every other claim holds
    - request: "scene-4/1/0c9f2e55"   # another kind of object: none of the claims holds
      target: false
      same_category: false

Keys: ``request`` (text, required; quote ids YAML would read as numbers), ``target`` (true / false,
required), ``same_category`` (true / false; required with ``target: false`` and not allowed with ``target:
true``), ``fails`` (a list of attribute names; only with ``target: false`` and ``same_category: true``; left
out or empty it means a look-alike none of whose claims tells it apart, which the target model counts too).
Nothing else is accepted, and a request may be listed once. Every problem is one :class:`LabelsError` line
naming the file, the entry (counted from 1, with its line) and the request, so a hand-written file is fixed
at once instead of quietly fitting a wrong table. The file is a whole-object truth on purpose: what a person
knows about the object, never a judgement of single views, which nobody could write for hundreds of frames.

What a survey row is made of
----------------------------

Per labelled request, the claims are the verdict's final attribute table in its order: the name, the claim
kind (the recorded ``claim_kind`` when the verifier filled it, i.e. it ran the evidential fusion; else read
from the evidence phrase as the verifier would, and ``description`` for whole-description attributes of the
direct / merged query modes), and the view hint of the phrase. The views are the transcript's steps that
judged a new image: a step marked ``duplicate_view`` re-shows the image of a failed move and the verifier
did not judge it again. A pose is one sector; when a sector was judged twice the later step is kept, as the
verifier's evidence ledger replaced that pose's earlier answers with it. A view's quality bin and weight are
those the fusion used: the quality from the crop box (none: the whole image), the weight the detection
confidence of a boxed view, else 1. Its answers are the attribute rows with an answer (Yes / No / Unsure);
the truth of each comes from the label.

Two things a synthetic survey knows are not in a bag, and are left neutral rather than guessed:

- which answers judged the object as a whole (a backend's category check, "this is a visor, not a cap"):
  every answer counts as an answer about its claim (``about_object`` false), so the fitted ``category``
  cells only ever see Unsure and carry no evidence;
- which claims a view could show (the exact oracle's visibility): ``visible`` is false throughout, so such a
  survey says nothing about visibility (``decisive when visible``; :mod:`.visibility_fit` needs the synthetic
  survey) and the view type ("far" / "near") is left empty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aiv_verifier.claims import DESCRIPTION_KIND, claim_kind, view_hint
from aiv_verifier.core.evidential import view_quality, view_weight
from aiv_verifier.core.types import Decision

from .survey import SurveyAnswer, SurveyPair, SurveyView

#: The keys an entry of a labels file may have.
LABEL_KEYS: tuple[str, ...] = ("request", "target", "same_category", "fails")


class LabelsError(ValueError):
    """A labels file, or a label against the bags, cannot be used; the one-line message says where and why."""


@dataclass(frozen=True)
class BagLabel:
    """The truth about one recorded request: was the object in view the described one, and if not, how not.

    ``source`` says where the label was written ("labels file FILE: entry N, line L") so that problems found only
    against the bags (a request recorded nowhere, a ``fails`` name the verdict does not have) still name it.
    """

    request: str
    target: bool
    same_category: bool = True
    fails: tuple[str, ...] = ()
    source: str = ""

    def __post_init__(self) -> None:
        if self.fails and (self.target or not self.same_category):
            raise LabelsError(
                f"{self.where}: 'fails' only applies to a look-alike (target: false, same_category: true)"
            )

    @property
    def where(self) -> str:
        return f"{self.source or 'label'} (request {self.request!r})"

    @property
    def pair_type(self) -> str:
        if self.target:
            return "positive"
        return "neg_same" if self.same_category else "neg_diff"

    @property
    def label(self) -> int:
        return 1 if self.target else 0

    def holds(self, name: str) -> bool:
        """Whether the claim ``name`` of the request is true of the object that was in view."""
        if self.target:
            return True
        return self.same_category and name not in self.fails


# -- the labels file ---------------------------------------------------------------------------------------


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _entry_lines(text: str) -> list[int]:
    """The 1-based line each top-level list item starts on (empty when the document is not a list)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if not isinstance(node, yaml.SequenceNode):
        return []
    return [item.start_mark.line + 1 for item in node.value]


def load_labels(path: str | Path) -> dict[str, BagLabel]:
    """The labels of a labels file (see the module docstring), by request id; :class:`LabelsError` if any
    entry is not exactly right."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LabelsError(f"labels file {path}: cannot be read: {_one_line(error)}") from error
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise LabelsError(f"labels file {path}: not valid YAML: {_one_line(error)}") from error
    if not isinstance(document, list):
        found = "nothing" if document is None else f"a {type(document).__name__}"
        raise LabelsError(
            f"labels file {path}: expected a list of entries (- request: ..., target: ...), got {found}"
        )
    if not document:
        raise LabelsError(f"labels file {path}: the list of entries is empty")
    lines = _entry_lines(text)
    labels: dict[str, BagLabel] = {}
    first_at: dict[str, str] = {}
    for index, entry in enumerate(document):
        line = f", line {lines[index]}" if index < len(lines) else ""
        label = _entry(entry, f"labels file {path}: entry {index + 1}{line}")
        if label.request in labels:
            raise LabelsError(
                f"{label.where}: the request is listed twice (first as {first_at[label.request]})"
            )
        labels[label.request] = label
        first_at[label.request] = f"entry {index + 1}{line}"
    return labels


def _entry(entry: object, source: str) -> BagLabel:
    if not isinstance(entry, dict):
        raise LabelsError(f"{source}: expected a mapping with request and target, got {type(entry).__name__}")
    request = entry.get("request")
    where = source + (f" (request {request!r})" if isinstance(request, str) else "")
    unknown = [str(key) for key in entry if key not in LABEL_KEYS]
    if unknown:
        raise LabelsError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(LABEL_KEYS)}"
        )
    if "request" not in entry:
        raise LabelsError(f"{where}: missing 'request' (the request id as recorded in the bag)")
    if not isinstance(request, str) or not request.strip():
        raise LabelsError(f"{where}: 'request' must be non-empty text (quote it), got {request!r}")
    if "target" not in entry:
        raise LabelsError(f"{where}: missing 'target' (true: the described object was in view, else false)")
    target = entry["target"]
    if not isinstance(target, bool):
        raise LabelsError(f"{where}: 'target' must be true or false, got {target!r}")
    if target:
        if "same_category" in entry:
            raise LabelsError(f"{where}: 'same_category' only applies with target: false")
        if "fails" in entry:
            raise LabelsError(f"{where}: 'fails' only applies with target: false and same_category: true")
        return BagLabel(request, True, source=source)
    if "same_category" not in entry:
        raise LabelsError(
            f"{where}: target: false needs 'same_category' (true: a look-alike of the same kind, false: another kind)"
        )
    same_category = entry["same_category"]
    if not isinstance(same_category, bool):
        raise LabelsError(f"{where}: 'same_category' must be true or false, got {same_category!r}")
    if "fails" not in entry:
        return BagLabel(request, False, same_category, source=source)
    fails = entry["fails"]
    if not same_category:
        raise LabelsError(
            f"{where}: 'fails' only applies with same_category: true (another kind fails every claim)"
        )
    if not isinstance(fails, list):
        raise LabelsError(f"{where}: 'fails' must be a list of attribute names, got {fails!r}")
    for name in fails:
        if not isinstance(name, str) or not name.strip():
            raise LabelsError(f"{where}: 'fails' names must be non-empty text, got {name!r}")
    repeated = sorted({name for name in fails if fails.count(name) > 1})
    if repeated:
        raise LabelsError(f"{where}: 'fails' lists {', '.join(map(repr, repeated))} more than once")
    return BagLabel(request, False, True, tuple(fails), source=source)


# -- the survey --------------------------------------------------------------------------------------------


def _claim(attribute: Any) -> tuple[str, str, str]:
    """(name, kind, hint) of one recorded attribute, the kind as the verifier's evidence ledger filed it."""
    phrase = str(attribute.evidence_phrase)
    name = str(attribute.name)
    if attribute.claim_kind:
        kind = str(attribute.claim_kind)
    elif attribute.type == "other":
        kind = DESCRIPTION_KIND
    else:
        kind = claim_kind(phrase, name)
    return name, kind, view_hint(phrase)


def _view(step: Any, label: BagLabel, claims: Mapping[str, tuple[str, str, str]], where: str) -> SurveyView:
    box = None
    if step.has_crop_box:
        crop = step.crop_box
        box = (int(crop.x_min), int(crop.y_min), int(crop.x_max), int(crop.y_max))
    weight = view_weight(box, float(step.detection_confidence))
    if not (math.isfinite(weight) and 0.0 <= weight <= 1.0):
        raise ValueError(f"{where}: step {step.step}: detection_confidence {weight} is not in [0, 1]")
    answers = []
    for row in step.attributes:
        if not row.last_answer:
            continue
        try:
            answer = Decision(row.last_answer)
        except ValueError as error:
            raise ValueError(
                f"{where}: step {step.step}: attribute {row.name!r} answered {row.last_answer!r}, "
                "expected Yes, No or Unsure"
            ) from error
        name, kind, hint = claims[str(row.name)]
        answers.append(SurveyAnswer(name, kind, hint, answer, False, label.holds(name), False))
    return SurveyView(
        sector=int(step.sector),
        view_type="",
        quality=view_quality(box),
        weight=weight,
        answers=tuple(answers),
    )


def _pair(index: int, episode: Any, label: BagLabel, where: str) -> SurveyPair:
    claims = {name: (name, kind, hint) for name, kind, hint in map(_claim, episode.verdict.attributes)}
    unknown = [name for name in label.fails if name not in claims]
    if unknown:
        raise LabelsError(
            f"{label.where}: 'fails' names {', '.join(map(repr, unknown))}, not attributes of the recorded "
            f"verdict ({', '.join(claims) or 'none'})"
        )
    kept: dict[int, Any] = {}
    for step in episode.verdict.transcript:
        if step.duplicate_view:
            continue
        kept.pop(int(step.sector), None)  # the later look at a pose replaces the earlier, keeping step order
        kept[int(step.sector)] = step
    for step in kept.values():
        strays = [str(row.name) for row in step.attributes if row.last_answer and str(row.name) not in claims]
        if strays:
            raise ValueError(
                f"{where}: step {step.step} answers {', '.join(map(repr, strays))}, not in the verdict's attributes"
            )
    views = tuple(_view(step, label, claims, where) for step in kept.values())
    return SurveyPair(index, label.pair_type, label.label, tuple(claims.values()), views)


def survey_bags(
    bag_dirs: Sequence[Path], labels: Mapping[str, BagLabel]
) -> tuple[list[SurveyPair], list[str]]:
    """The survey pairs of every labelled request recorded in ``bag_dirs`` (in bag and recording order, the
    pair index counting from 0), and one-line notes on what was left out.

    Left out with a note: a request the labels do not mention (a lab may label only part of a session), a
    request recorded without steps, a bag directory given twice. Errors (:class:`LabelsError`): a label whose
    request no bag has, since a typo in a request id would otherwise silently drop that label; a ``fails``
    name the request's verdict does not have. A bag that cannot be read is the reader's one-line
    :class:`~aiv_bags_ros.session_bag.SessionBagError`, and a recorded step the fusion could not have used
    (an answer other than Yes / No / Unsure, a weight outside [0, 1], an answer to an attribute the verdict
    lacks) a ValueError naming bag, request and step. A request recorded in several bags gives a pair per
    recording (the label is the truth of the request wherever it ran).
    """
    # Imported here: reading bags needs the built workspace (rclpy and the interfaces), labels do not.
    from aiv_bags_ros.session_reader import read_session

    pairs: list[SurveyPair] = []
    notes: list[str] = []
    found: set[str] = set()
    seen_dirs: set[Path] = set()
    for bag_dir in bag_dirs:
        resolved = Path(bag_dir).resolve()
        if resolved in seen_dirs:
            notes.append(f"bag {bag_dir}: given more than once; surveyed once")
            continue
        seen_dirs.add(resolved)
        recording = read_session(Path(bag_dir))
        for line in recording.skipped:
            notes.append(f"bag {bag_dir}: {line}; not surveyed")
            found.update(request for request in labels if line.startswith(f"request {request}: "))
        for episode in recording.episodes:
            request = episode.request_id
            label = labels.get(request)
            if label is None:
                notes.append(f"bag {bag_dir}: request {request!r} has no label; skipped")
                continue
            found.add(request)
            pairs.append(_pair(len(pairs), episode, label, f"bag {bag_dir}: request {request!r}"))
    missing = [label for request, label in labels.items() if request not in found]
    if missing:
        bags = ", ".join(str(bag_dir) for bag_dir in bag_dirs)
        raise LabelsError(
            f"{'; '.join(label.where for label in missing)}: recorded in none of the bags ({bags})"
        )
    return pairs, notes


__all__ = ["LABEL_KEYS", "BagLabel", "LabelsError", "load_labels", "survey_bags"]
