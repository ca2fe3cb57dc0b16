"""Markdown + HTML reports: files, well-formed self-contained HTML, charts, escaping, episode pages, same bytes
on every run. (tests/evaluation/test_report_in_browser.py renders the pages in a real browser.)"""

from __future__ import annotations

import ast
import base64
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from aiv_eval import ResultsStore, compute_metrics, load_run
from aiv_eval.report import select_episodes, write_report
from aiv_eval.report.sector_ring import ring_state, sector_ring_svg
from aiv_eval.report.step_curves import step_curves
from PIL import Image

from .builders import index_entry, infra, record, run_config, six_episodes

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
EVIL = '<script>alert("x")</script> & "quoted" mug'


class StrictChecker(HTMLParser):
    """Fails on unbalanced or misnested tags and records what a self-contained page must not have."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[str] = []
        self.external: list[str] = []
        self.scripts = 0
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "script":
            self.scripts += 1
        for name, value in attrs:
            if name in ("src", "href") and value and re.match(r"^[a-z]+://|^//", value):
                self.external.append(value)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)  # <rect .../> inside svg

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check_html(path: Path) -> StrictChecker:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    checker = StrictChecker()
    checker.feed(text)
    checker.close()
    assert checker.errors == [], checker.errors[:5]
    assert checker.stack == [], f"unclosed tags: {checker.stack}"
    assert checker.external == [], "report must be self-contained"
    assert checker.scripts == 0
    assert "<link" not in text
    return checker


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    crops = run / "crops"
    crops.mkdir(parents=True)
    Image.new("RGB", (64, 96), (200, 30, 30)).save(crops / "ep1_step1.jpg")
    Image.new("RGB", (600, 300), (30, 30, 200)).save(crops / "ep1_step2.png")
    records = six_episodes()
    # E1 (wrong) gets crops and a hostile description
    records[1] = record(
        1,
        index_entry(episode="ep2", target="mugB"),
        "No",
        ["Yes", "Yes", "No"],
        outcomes=["moved", "unreachable", "none"],
        traps=[True, False, False],
        sectors=[0, 1, 1],
        nav_rels=["front-left (MLLM-Reasoning)", "back", None],
        crops=["crops/ep1_step1.jpg", "crops/ep1_step2.png", "crops/missing.jpg"],
        descriptions=(EVIL, "a mug </td></tr> with <b>bold</b> text", "plain"),
        stop_reason="final",
    )
    records.append(
        infra(6, index_entry(scene="s3", episode="ep6", target="bagA", target_category="bag"), "sim <died>")
    )
    with ResultsStore.open(run, run_config(name="MV <Attr> & LLM")) as store:
        for rec in records:
            store.append(rec)
    return run


def test_report_files_and_well_formed_html(run_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    with ResultsStore.open(other, run_config(name="other-run", seed=1)) as store:
        for rec in six_episodes()[:4]:
            store.append(rec)
    files = write_report([run_dir, other], bootstrap_resamples=200)
    assert files.markdown == run_dir / "report.md" and files.html == run_dir / "report.html"
    assert files.markdown.is_file() and files.html.is_file()
    index = check_html(files.html)
    html = files.html.read_text()
    # charts (matplotlib): heatmap, scatter with one point per run, nav failure bars, the steps chart
    assert '<svg class="heatmap"' in html
    assert '<svg class="scatter"' in html and len(re.findall(r'<g id="scatter-run-\d+"><title>', html)) == 2
    assert '<svg class="navbars"' in html
    assert '<svg class="steps"' in html
    assert index.tags.count("svg") == 4
    # one cell per category (mug, keys, bag: the infra failure's category has no scored episode) and the
    # overall row, times three pair types and "all"; every cell has its tooltip
    assert len(re.findall(r'<g id="heatmap-cell-\d+-\d+"><title>', html)) == 3 * 4
    assert "mug / Pos: 1/2 = 0.5000" in html
    # metrics table content and escaped run name
    assert "0.6667" in html and "MV &lt;Attr&gt; &amp; LLM" in html and "MV <Attr>" not in html
    assert "sim &lt;died&gt;" in html
    # episode pages: 2 wrong (E1, E3) + 1 infra failure + the 4 correct (sample of 10)
    assert len(files.episode_pages) == 7
    for page in files.episode_pages:
        check_html(page)
        assert page.parent == run_dir / "episodes"
    assert 'href="episodes/ep_000001.html"' in html
    md = files.markdown.read_text()
    assert "| Accuracy | 0.6667 |" in md and "## Runs" in md and "other-run" in md
    assert "MV &lt;Attr&gt; &amp; LLM" in md


def test_user_text_is_escaped_everywhere(run_dir: Path) -> None:
    files = write_report([run_dir], bootstrap_resamples=100)
    page = run_dir / "episodes" / "ep_000001.html"
    text = page.read_text()
    checker = check_html(page)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quoted&quot; mug" in text
    assert "<script>" not in text
    assert "&lt;/td&gt;&lt;/tr&gt;" in text and "<b>bold</b>" not in text
    assert EVIL in "".join(checker.text)  # it reads back as the original text
    for path in [files.html, files.markdown, *files.episode_pages]:
        assert "<script>" not in path.read_text()


def test_episode_page_content(run_dir: Path) -> None:
    write_report([run_dir], bootstrap_resamples=100)
    text = (run_dir / "episodes" / "ep_000001.html").read_text()
    assert '<svg class="ring"' in text
    # two crops embedded as JPEG data URIs (thumbnailed), the missing one reported
    uris = re.findall(r'src="data:image/jpeg;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(uris) == 2
    assert base64.b64decode(uris[0])[:2] == b"\xff\xd8"
    assert "crop crops/missing.jpg not found" in text
    # attribute table over the steps
    assert text.count("Step 1") >= 1 and "<code>color</code>" in text and 'class="state-Matched"' in text
    assert "front-left (MLLM-Reasoning)" in text


def test_crops_outside_the_run_dir_are_not_embedded(tmp_path: Path) -> None:
    from aiv_eval.report.crops import crop_data_uri

    run = tmp_path / "run"
    run.mkdir()
    Image.new("RGB", (8, 8)).save(tmp_path / "secret.png")
    (run / "link.png").symlink_to(tmp_path / "secret.png")
    assert crop_data_uri(run, "link.png") is None
    Image.new("RGB", (8, 8)).save(run / "ok.png")
    assert crop_data_uri(run, "ok.png").startswith("data:image/jpeg;base64,")
    (run / "bad.png").write_bytes(b"not an image")
    assert crop_data_uri(run, "bad.png") is None


def test_ring_state_from_the_transcript() -> None:
    rec = record(
        0,
        index_entry(),
        "Yes",
        ["No", "No", "No", "Yes"],
        sectors=[2, 3, 3, 5],
        outcomes=["moved", "unreachable", "moved", "none"],
        nav_rels=["front-left", "back (MLLM-Reasoning)", "back-left", None],
        traps=[True, False, False, False],
    )
    st = ring_state(rec)
    assert st.start == 2
    assert st.visited_order == [2, 3, 5]
    assert st.failed_targets == [0]  # back (+3) from sector 3
    assert st.trap_arrivals == [3]
    svg = sector_ring_svg(rec)
    assert len(re.findall(r'<g id="ring-sector-\d"><title>sector', svg)) == 6
    assert "failed move target" in svg and "trap arrival" in svg
    # emphasised outlines come after the wedges: the failed target (dashed) and then the start (thick)
    order = [svg.index(f'id="ring-{gid}"') for gid in ("sector-5", "failed-0", "start")]
    assert order == sorted(order)
    failed = svg[order[1] : order[2]]
    assert "stroke-dasharray" in failed and "fill: none" in failed


def test_episode_selection_is_deterministic_and_capped() -> None:
    records = [
        record(i, index_entry(episode=f"e{i}"), "Yes" if i % 3 else "No", ["Yes" if i % 3 else "No"])
        for i in range(30)
    ]  # i % 3 == 0 -> "No" on a positive pair -> wrong (10 wrong, 20 correct)
    records.append(infra(30, index_entry(episode="e30")))
    chosen = select_episodes(records, correct_sample=5, seed=0)
    wrong = [r for r in chosen if r.is_ok and not r.is_correct]
    assert len(wrong) == 10 and len(chosen) == 10 + 1 + 5
    assert [r.episode_index for r in chosen] == sorted(r.episode_index for r in chosen)
    assert select_episodes(records, correct_sample=5, seed=0) == chosen
    assert select_episodes(records, correct_sample=5, seed=1) != chosen
    capped = select_episodes(records, correct_sample=5, max_pages=4)
    assert len(capped) == 4 and all(not r.is_correct for r in capped)  # wrong ones first


def test_report_to_another_dir_replaces_stale_pages(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "episodes").mkdir(parents=True)
    (out / "episodes" / "ep_999999.html").write_text("stale")
    files = write_report([load_run(run_dir)], out, max_episode_pages=1, bootstrap_resamples=100)
    assert files.html == out / "report.html"
    assert sorted(p.name for p in (out / "episodes").iterdir()) == ["ep_000001.html"]
    # crops still come from the run dir
    assert "data:image/jpeg;base64," in (out / "episodes" / "ep_000001.html").read_text()


def test_report_uses_given_metrics(run_dir: Path) -> None:
    m = compute_metrics(load_run(run_dir).records, wall_time_s=99.0, bootstrap_resamples=50)
    files = write_report([run_dir], metrics=m)
    assert "99.0 s" in files.html.read_text()


def test_the_same_run_gives_the_same_bytes(run_dir: Path, tmp_path: Path) -> None:
    """Charts included: matplotlib's ids are salted with a fixed string and no date is written."""
    first = write_report([run_dir], tmp_path / "a", bootstrap_resamples=100)
    second = write_report([run_dir], tmp_path / "b", bootstrap_resamples=100)
    for one, other in zip(
        [first.html, first.markdown, *first.episode_pages],
        [second.html, second.markdown, *second.episode_pages],
        strict=True,
    ):
        assert one.read_bytes() == other.read_bytes(), one.name
    html = first.html.read_text()
    assert "<metadata>" not in html and "<?xml" not in html and "Matplotlib v" not in html
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "ids of inline charts must be unique on the page"


def test_step_curves_stop_each_episode_after_k_steps() -> None:
    """six_episodes, by hand: an episode past its last step keeps its final answer (E5's Unsure counts as a
    negative answer, not as a YES)."""
    curves = step_curves(six_episodes())
    assert curves.steps == (1, 2, 3, 4)
    assert curves.accuracy == pytest.approx((4 / 6, 4 / 6, 4 / 6, 4 / 6))
    assert curves.acceptance == pytest.approx((1.0, 1.0, 0.5, 0.5))
    assert curves.false_acceptance == pytest.approx((0.5, 0.5, 0.25, 0.25))
    assert curves.still_looking == pytest.approx((4 / 6, 2 / 6, 1 / 6, 0.0))
    assert step_curves([]).steps == ()


def test_the_steps_chart_draws_three_curves_and_a_bar_per_step(run_dir: Path) -> None:
    html = write_report([run_dir], bootstrap_resamples=100).html.read_text()
    chart = re.search(r'<svg class="steps".*?</svg>', html, re.S)
    assert chart is not None
    series = re.findall(r'<g id="steps-series-(\w+)"><title>', chart.group(0))
    assert series == ["accuracy", "acceptance", "false_acceptance"]
    assert len(re.findall(r'<g id="steps-still-\d+"><title>', chart.group(0))) == 4  # the longest episode
    assert 'id="steps-asd"' in chart.group(0)


def test_matplotlib_is_imported_only_inside_the_chart_functions() -> None:
    """Like the model libraries (tests/test_package_boundaries.py): no module imports matplotlib at its top
    level, so importing the evaluation, its command line or the report package never loads it."""
    src = Path(__file__).resolve().parents[2] / "ros2_ws" / "src"
    top_level = []
    for path in sorted(src.glob("*/*/**/*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:  # statements at module level (an `if TYPE_CHECKING:` block is not run)
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(name.split(".")[0] == "matplotlib" for name in names):
                top_level.append(str(path.relative_to(src)))
    assert top_level == []
    probe = (
        "import sys, aiv_eval, aiv_eval.cli, aiv_eval.report, aiv_eval.report.trust_page, "
        "aiv_eval.evidence.trust_table; print('matplotlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
