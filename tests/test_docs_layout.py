"""The documentation's shape: a README that fits on a screen, links that lead somewhere, a current parameter page.

README.md says what the project is, the two commands, the nodes and the three uses, and links to docs/ for the
rest (issue #31). These checks keep it that way as the project grows: the README stays within
:data:`README_MAX_LINES`; every relative link in README.md and docs/*.md names a file that exists (and, for a
Markdown file, a heading that exists, with GitHub's anchor rule), so moving a section cannot leave a dead link;
CI runs the test command the README shows; and docs/parameters.md is exactly what ``scripts/parameters_doc.py``
writes from the nodes' parameter tables, so it cannot drift from what the nodes declare.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
README = REPO_ROOT / "README.md"
DOCUMENTS = [README, *sorted((REPO_ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 250

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"`+[^`]*`+")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, with inline code spans removed (no links there)."""
    lines: list[tuple[int, str]] = []
    in_block = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            in_block = not in_block
            continue
        if not in_block:
            lines.append((number, _INLINE_CODE.sub("", line)))
    return lines


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces turned into hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(document: Path) -> set[str]:
    """Every heading anchor of a Markdown file (repeated headings get -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    result: set[str] = set()
    in_block = False
    for line in document.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            in_block = not in_block
            continue
        match = None if in_block else _HEADING.match(line)
        if match:
            base = github_anchor(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            result.add(base if count == 0 else f"{base}-{count}")
    return result


def relative_links(document: Path) -> list[tuple[str, str]]:
    """(where, target) of every link in ``document`` that is not a URL."""
    links = []
    for number, line in _prose_lines(document.read_text(encoding="utf-8")):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto:, ...
                continue
            links.append((f"{document.relative_to(REPO_ROOT)}:{number}", target))
    return links


def link_problem(document: Path, target: str) -> str | None:
    """Why ``target`` (a link in ``document``) leads nowhere; None when it leads to an existing file / heading.

    A link that leaves the repository (``../shared/docs/...``: shared documents kept beside the clone) is
    checked only where the directory it goes into exists, so a clone without ``../shared`` still passes.
    """
    path_text, _, anchor = target.partition("#")
    path = (document.parent / path_text).resolve() if path_text else document
    if not path.is_relative_to(REPO_ROOT):
        outside = path.relative_to(REPO_ROOT.parent).parts[0]
        if not (REPO_ROOT.parent / outside).is_dir():
            return None
    if not path.exists():
        return f"{target}: no such file"
    if anchor and path.suffix == ".md" and anchor not in anchors(path):
        return f"{target}: no heading with anchor #{anchor} in {path.name}"
    return None


def test_the_readme_fits_on_a_screen_or_four() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, more than {README_MAX_LINES}: move detail into a docs/ topic page"
    )


def test_every_relative_link_in_the_documents_leads_somewhere() -> None:
    problems = [
        f"{where}: {problem}"
        for document in DOCUMENTS
        for where, target in relative_links(document)
        if (problem := link_problem(document, target)) is not None
    ]
    assert not problems, "\n".join(problems)


def test_the_readme_links_every_topic_document() -> None:
    text = README.read_text(encoding="utf-8")
    missing = [
        document.name
        for document in DOCUMENTS[1:]
        if f"](docs/{document.name})" not in text and f"](docs/{document.name}#" not in text
    ]
    assert not missing, f"README.md does not link {', '.join(missing)}"


def test_the_link_checker_sees_links_and_finds_dead_ones() -> None:
    # The checks above would pass vacuously if the checker saw nothing: it must see these, and only these.
    text = "[a](x.md#a) `[b](y.md)` [c](https://example.org)\n```\n[d](z.md)\n```\n![e](img.png)\n"
    assert [target for _, line in _prose_lines(text) for target in _LINK.findall(line)] == [
        "x.md#a",
        "https://example.org",
        "img.png",
    ]
    document = REPO_ROOT / "docs" / "models.md"
    assert link_problem(document, "missing.md") == "missing.md: no such file"
    assert link_problem(document, "parameters.md#no-such-heading") is not None
    assert link_problem(document, "parameters.md#verifier") is None
    assert link_problem(document, "#no-such-heading") is not None
    assert link_problem(document, "../README.md#the-two-commands") is None


def test_github_anchors_follow_githubs_rule() -> None:
    assert github_anchor("Grounding DINO detection (`agent.bbox_mode: detector` or the `detector_node`)") == (
        "grounding-dino-detection-agentbbox_mode-detector-or-the-detector_node"
    )
    assert (
        github_anchor("AIV — active instance verification on ROS 2")
        == "aiv--active-instance-verification-on-ros-2"
    )


def test_ci_runs_the_test_command_the_readme_shows() -> None:
    text = README.read_text(encoding="utf-8")
    commands = re.search(r"## The two commands\s+```bash\n(.*?)```", text, re.DOTALL)
    assert commands, "README.md has no 'The two commands' block"
    shown = [line.split("#", 1)[0].strip() for line in commands.group(1).splitlines()]
    assert shown == ["make demo", "make test"], shown
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert [line for line in ci.splitlines() if line and not line.startswith("#")][-1] == "make test"


def test_the_parameter_page_is_what_the_parameter_tables_say() -> None:
    spec = importlib.util.spec_from_file_location(
        "parameters_doc", REPO_ROOT / "scripts" / "parameters_doc.py"
    )
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    expected = generator.render()  # needs the workspace on the path (`source .env.sh`, as `make test` does)
    current = (REPO_ROOT / "docs" / "parameters.md").read_text(encoding="utf-8")
    assert current == expected, "docs/parameters.md is out of date: run `python scripts/parameters_doc.py`"
