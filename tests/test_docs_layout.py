"""The documentation's shape: a README that fits on a screen, links that stay inside the repository, a current
parameter page.

README.md says what the project is, the two commands, the nodes and the three uses, and links to docs/ for the
rest (issue #31). These checks keep it that way as the project grows: the README stays within
:data:`README_MAX_LINES`; CI runs the test command the README shows; docs/parameters.md is exactly what
``scripts/parameters_doc.py`` writes from the nodes' parameter tables, so it cannot drift from what the nodes
declare; and every relative link of every Markdown file of the repository (README.md, docs/*.md and the others,
outside data, the virtual environment and build products) leads to a file inside the repository and, into a
Markdown file, to a heading that exists (GitHub's anchor rule), so moving a section cannot leave a dead link.

A clone must stand alone, so the link check never looks outside the repository: a link is resolved from its
text alone (no symbolic link is followed), and one that climbs out of the repository (``../shared/...``, a
folder kept beside the clone on some machines) fails whether or not its target exists there. So does a link
through a symbolic link (it hides where the file lives and breaks where links are not checked out) and an
absolute path. Every problem is reported with the file, the line and the link; a strange link never makes the
check itself raise.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
README = REPO_ROOT / "README.md"
TOPIC_DOCUMENTS = sorted((REPO_ROOT / "docs").glob("*.md"))
README_MAX_LINES = 250

#: Directories never searched for documents, at any depth: version control, caches, virtual environments.
_SKIPPED_ANYWHERE = frozenset(
    {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", "node_modules"}
)
#: Directories, relative to the repository root, that hold data, runs and build products (all ignored by git).
_SKIPPED_PATHS = frozenset(
    {
        "data",
        "runs",
        ".cache",
        ".gl",
        ".whl",
        ".ros2-tools",
        "ros2_ws/build",
        "ros2_ws/install",
        "ros2_ws/log",
    }
)

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"`+[^`]*`+")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:, ...


def markdown_documents(root: Path = REPO_ROOT) -> list[Path]:
    """Every Markdown file of the repository at ``root`` (regular files, no symbolic links), sorted.

    Data, runs, caches, the virtual environment and build products are left out; symbolic links to
    directories are not followed.
    """
    found: list[Path] = []
    for directory, subdirectories, files in os.walk(root):
        here = Path(directory)
        relative = here.relative_to(root).as_posix()
        subdirectories[:] = sorted(
            name
            for name in subdirectories
            if name not in _SKIPPED_ANYWHERE
            and (name if relative == "." else f"{relative}/{name}") not in _SKIPPED_PATHS
        )
        found.extend(here / name for name in files if name.endswith(".md") and not (here / name).is_symlink())
    return sorted(found)


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


def relative_links(document: Path, root: Path = REPO_ROOT) -> list[tuple[str, str]]:
    """(``file:line``, target) of every link in ``document`` that is not a URL."""
    try:
        name = document.relative_to(root).as_posix()
    except ValueError:  # a document given from elsewhere: name it as it was given
        name = str(document)
    return [
        (f"{name}:{number}", target)
        for number, line in _prose_lines(document.read_text(encoding="utf-8"))
        for target in _LINK.findall(line)
        if not _URL.match(target)
    ]


def _lexical_target(document: Path, path_text: str) -> Path:
    """Where ``path_text``, written in ``document``, points, worked out from the text alone: ``.`` and ``..``
    are applied to the names, no symbolic link is resolved and nothing outside is looked at."""
    return Path(os.path.normpath(document.parent / unquote(path_text)))


def link_problem(document: Path, target: str, root: Path = REPO_ROOT) -> str | None:
    """Why ``target`` (a link in ``document``, a file of the repository at ``root``) is not a link into the
    repository that leads somewhere; None when it leads to an existing file or directory (and heading).

    Nothing outside ``root`` is consulted, so the answer is the same in a clone with or without anything beside
    it, and no link, however odd, makes this raise.
    """
    path_text, _, anchor = target.partition("#")
    if not path_text:
        path = document
    elif path_text.startswith("/"):
        return f"{target}: an absolute path; link with a path relative to {document.name}"
    else:
        path = _lexical_target(document, path_text)
        if not path.is_relative_to(root):
            return f"{target}: leads outside the repository; documents must stand alone"
        walked = root
        for part in path.relative_to(root).parts:
            walked = walked / part
            if walked.is_symlink():
                where = walked.relative_to(root).as_posix()
                return f"{target}: goes through the symbolic link {where}; link the file it points to"
        if not path.exists():
            return f"{target}: no such file"
    if anchor and path.suffix == ".md" and path.is_file() and anchor not in anchors(path):
        return f"{target}: no heading with anchor #{anchor} in {path.name}"
    return None


def link_problems(documents: list[Path], root: Path = REPO_ROOT) -> list[str]:
    """``file:line: problem`` for every link of ``documents`` that does not lead somewhere in the repository."""
    return [
        f"{where}: {problem}"
        for document in documents
        for where, target in relative_links(document, root)
        if (problem := link_problem(document, target, root)) is not None
    ]


def test_the_readme_fits_on_a_screen_or_four() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, more than {README_MAX_LINES}: move detail into a docs/ topic page"
    )


def test_the_documents_are_found() -> None:
    documents = markdown_documents()
    assert README in documents and set(TOPIC_DOCUMENTS) <= set(documents)
    assert REPO_ROOT / "bags" / "README.md" in documents
    skipped = ("data/", ".venv/", "ros2_ws/build/", "ros2_ws/install/", "runs/")
    assert not [d for d in documents if d.relative_to(REPO_ROOT).as_posix().startswith(skipped)]


def test_every_relative_link_in_the_documents_leads_somewhere_inside_the_repository() -> None:
    problems = link_problems(markdown_documents())
    assert not problems, "\n".join(problems)


def test_the_readme_links_every_topic_document() -> None:
    text = README.read_text(encoding="utf-8")
    missing = [
        document.name
        for document in TOPIC_DOCUMENTS
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
    assert link_problem(document, "../bags/README.md") is None
    assert link_problem(document, "../ros2_ws/src/aiv_checks") is None  # a directory
    assert link_problem(document, "/README.md") is not None


def _repository_with_a_neighbour(tmp_path: Path) -> tuple[Path, Path]:
    """A small repository (README.md, docs/a.md) with a folder ``shared`` beside it holding a document."""
    root = tmp_path / "work" / "clone"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text("# Top\n\n[a](docs/a.md)\n", encoding="utf-8")
    (root / "docs" / "a.md").write_text("# A\n", encoding="utf-8")
    shared = tmp_path / "work" / "shared" / "docs"
    shared.mkdir(parents=True)
    (shared / "spec.md").write_text("# Spec\n", encoding="utf-8")
    return root, root / "docs" / "a.md"


def test_a_link_out_of_the_repository_fails_even_where_its_target_exists(tmp_path: Path) -> None:
    root, document = _repository_with_a_neighbour(tmp_path)
    assert (document.parent / "../../shared/docs/spec.md").exists()
    for target in ("../../shared/docs/spec.md", "../../shared/docs/spec.md#spec", "../../../elsewhere.md"):
        problem = link_problem(document, target, root)
        assert problem is not None and "outside the repository" in problem, (target, problem)
    # A path that leaves and comes back in is still inside: it is judged by where it ends.
    assert link_problem(document, "../../clone/README.md#top", root) is None


def test_a_symbolic_link_on_the_way_is_reported_not_followed(tmp_path: Path) -> None:
    # The old check resolved links and crashed (ValueError from Path.relative_to) when ../shared was itself a
    # symbolic link to a folder elsewhere; links to it, into it and through one inside are reported instead.
    root, document = _repository_with_a_neighbour(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (tmp_path / "work" / "shared").rename(elsewhere)
    (tmp_path / "work" / "shared").symlink_to(elsewhere, target_is_directory=True)
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    (root / "docs" / "b.md").symlink_to(root / "docs" / "a.md")
    (document).write_text(
        "[s](../../shared/docs/spec.md)\n[l](../linked/docs/spec.md)\n[b](b.md)\n[ok](../README.md#top)\n",
        encoding="utf-8",
    )
    problems = link_problems([document], root)
    assert len(problems) == 3, problems
    assert problems[0].startswith("docs/a.md:1: ../../shared/docs/spec.md: leads outside the repository")
    assert problems[1].startswith(
        "docs/a.md:2: ../linked/docs/spec.md: goes through the symbolic link linked"
    )
    assert problems[2].startswith("docs/a.md:3: b.md: goes through the symbolic link docs/b.md")
    # The document walk takes neither the linked folder nor the linked file.
    assert markdown_documents(root) == [root / "README.md", document]


def test_a_clone_without_anything_beside_it_has_no_dead_links(tmp_path: Path) -> None:
    # Copy every document and everything it links to into a clone with nothing beside it (no ../shared):
    # the documents' links must all still lead somewhere there.
    clone = tmp_path / "lonely" / "clone"
    documents = markdown_documents()
    for document in documents:
        copy = clone / document.relative_to(REPO_ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(document, copy)
    for document in documents:
        for _, target in relative_links(document):
            path_text = target.partition("#")[0]
            if not path_text or path_text.startswith("/"):
                continue
            source = _lexical_target(document, path_text)
            if not source.is_relative_to(REPO_ROOT) or not source.exists() or source.is_symlink():
                continue  # reported below, in the clone too
            copy = clone / source.relative_to(REPO_ROOT)
            if source.is_dir():
                copy.mkdir(parents=True, exist_ok=True)
            elif not copy.exists():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)
    assert not (clone.parent / "shared").exists()
    cloned = [clone / document.relative_to(REPO_ROOT) for document in documents]
    problems = link_problems(cloned, clone)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("text", ["[x](../", "[x]()", "[x](<>)", "[x](%zz.md)", "[x](a\x00b.md)", "[x](#)"])
def test_odd_links_never_make_the_check_raise(tmp_path: Path, text: str) -> None:
    root, document = _repository_with_a_neighbour(tmp_path)
    document.write_text(text + "\n", encoding="utf-8")
    link_problems([document], root)  # reports or accepts; must not raise


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
