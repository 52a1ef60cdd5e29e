"""Session permalinks through real `mkdocs build`s: immutable when sessions and machines are
added, a damaged kept session refused with file:line, history on every figure page."""

import functools
import gzip
import html
import html.parser
import re
import shutil
import subprocess

import pytest
from test_sessions import keep_as, rewrite

from benchkit import archive
from benchsite.core import urls
from benchsite.views import session as session_view
from conftest import REFERENCE, REPO, build_site

STEM, FIG = "naive_vs_blocked", "fig-naive-vs-blocked"
LATER = "20991231T000000Z-beef"
ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)


def article(page) -> str:
    return ARTICLE.search(page.read_text(encoding="utf-8")).group(1)


def session_of(path) -> str:
    return re.search(r"\n\d+,fig-[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),", path.read_text()).group(1)


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    root = tmp_path_factory.mktemp("perma") / "results"
    shutil.copytree(REPO / "results" / REFERENCE, root / REFERENCE)
    return root


SITE, REPO_URL = "https://example.org/jax/bench/", "https://github.com/someone/jax-bench-honest"
PUBLIC = {"SITE_URL": SITE, "REPO_URL": REPO_URL}  # a build with a public address


@pytest.fixture(scope="module")
def public(tmp_path_factory):
    """The committed results built with a public address (every page's key holds the address, so
    this is a build of its own): the site. Two tests read it: the permalinks as first published,
    and the machine pages' links to the data at its commit."""
    out = tmp_path_factory.mktemp("public") / "site"
    proc = build_site(out, extra_env=PUBLIC)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def without_data_link(text: str) -> str:
    """A session page's article without what says where its data is in the repository."""
    text = re.sub(r'<p class="bench-meta">Data: .*?</p>', "", text)
    return re.sub(r"\ndata      [^\n]*", "\ndata      …", text)


@pytest.mark.slow
def test_a_permalink_page_does_not_change_when_sessions_and_machines_are_added(public, copied, tmp_path):
    """First published from the committed results (the checkout's folder, both machines); then
    from a copy of the reference machine's folder, elsewhere, with a later session and another
    machine added: the page is the same, whatever the folder and whichever other machines."""
    path = copied / REFERENCE / f"{STEM}.csv"
    first = session_of(path)
    permalink = f"bench/{FIG}/{REFERENCE}/{first}/index.html"
    before = article(public / permalink)
    assert "cannot change: that session's samples" in before and "Cite this result" in before
    # With a public address: the cite block's absolute permalink is the site's address and the page's
    # path joined once (the site's /bench section under a site published at /bench/), the code and
    # the clone from the configured repository.
    cite = html.unescape(before)
    url = f"{SITE}bench/{FIG}/{REFERENCE}/{first}/"
    assert f'Permalink: <a href="{url}">{url}</a>' in cite and f"url       {url}</code>" in cite and f"]({url})" in cite
    assert f"git clone {REPO_URL} rerun" in cite and f'href="{REPO_URL}/tree/' in cite
    assert "<site address>" not in cite and "<repository>" not in cite
    latest = html.unescape(article(public / f"bench/{FIG}/{REFERENCE}/index.html"))
    assert f'Data: <a href="../../../results/{REFERENCE}/{STEM}.csv.gz">' in latest
    assert (public / "results" / REFERENCE / f"{STEM}.csv.gz").is_file()
    # A later session replaces the file (run.py keeps the old one first), and a machine arrives.
    assert archive.archive(path, copied, keep=[LATER])
    rewrite(path, path, LATER, where={"variant": "blocked"}, by=2.0)
    rewrite(path, copied / "cpu-other-2c" / f"{STEM}.csv", LATER, machine="cpu-other-2c")
    proc = build_site(tmp_path / "two", copied, extra_env=PUBLIC)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The copy is outside any git checkout, so its build has no commit to link the session's data at
    # (the checkout's build links it: the link's own stability, while the session is the latest and
    # after it is kept, is test_a_sessions_data_link_is_the_commit_that_held_it_before_and_after_it_is_kept).
    assert f'Data: <a href="{REPO_URL}/blob/' in before
    assert without_data_link(article(tmp_path / "two" / permalink)) == without_data_link(before)
    latest = article(tmp_path / "two" / f"bench/{FIG}/{REFERENCE}/index.html")
    assert f"Latest session: <strong>{LATER}</strong>" in latest and f'href="{LATER}/"' in latest
    kept = {d.name for d in (copied / REFERENCE / "sessions").iterdir() if (d / f"{STEM}.csv.gz").is_file()}
    assert LATER not in kept and first in kept
    assert latest.count("<circle") == len(kept) + 1  # the history: one point a session, the latest too
    changes = html.unescape(article(tmp_path / "two" / f"bench/changes/{REFERENCE}/index.html"))
    section = changes.split(f'<h2 id="{FIG}">', 1)[1].split("</section>", 1)[0]  # this figure's part
    moved = re.findall(r"<tr><td data-title>([^<]*)</td>", section.split('class="bench-moved"', 1)[1])
    assert moved == ["blocked at n=2048", "blocked / naive at n=2048"]  # the scaled cell, not naive
    assert 'href="changes/' + REFERENCE + '/"' in (tmp_path / "two" / "bench" / "index.html").read_text()


@pytest.mark.slow
def test_the_cite_block_links_the_permalink_the_code_and_how_to_reproduce_it(built_site):
    """With no public address (mkdocs.yml's default) the block links within the site and says so."""
    path = REPO / "results" / REFERENCE / f"{STEM}.csv"
    sid = session_of(path)
    page = html.unescape(article(built_site / "bench" / FIG / REFERENCE / sid / "index.html"))
    url = f"<site address>/bench/{FIG}/{REFERENCE}/{sid}/"
    assert 'Permalink: <a href="./">' in page and "no public address is configured" in page
    assert f"url       {url}</code>" in page and f"]({url})" in page
    commit = re.search(r"\n\d+,(?:[^,]*,){5}([0-9a-f]{40}),", path.read_text()).group(1)
    assert f"<code>{commit[:12]}</code>" in page and "no repository address is configured" in page
    # The commit is recorded: the script's line names it, unlinked, rather than say it was not recorded.
    assert f"<code>bench_scripts/{STEM}.py</code> at <code>{commit[:12]}</code>" in page
    assert "commit not recorded" not in page
    assert f"make bench ONLY={STEM} MACHINE={REFERENCE}" in page and "git clone <repository> rerun" in page
    assert "git checkout " in page and f"[{FIG} on {REFERENCE}, session {sid}: " in page
    assert "Data: " not in page  # the latest file's download is the machine page's: this page stays as it is


class _Layout(html.parser.HTMLParser):
    """What a page's layout holds: its sidebars (``data-md-type``), links, canonical URL, and whether
    every element it opens is closed, in order (void elements aside)."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
            "path", "circle", "rect", "line"}

    def __init__(self, text: str) -> None:
        super().__init__()
        self.sidebars, self.links, self.canonical, self.open, self.misnested = [], [], [], [], []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-md-type" in a:
            self.sidebars.append(a["data-md-type"])
        if tag == "a":
            self.links.append([a.get("href"), ""])
        if tag == "link" and a.get("rel") == "canonical":
            self.canonical.append(a.get("href"))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_data(self, data):
        if self.links and "a" in self.open:
            self.links[-1][1] += data

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.open or self.open[-1] != tag:
            self.misnested.append(tag)
        else:
            self.open.pop()


def session_page(site):
    sid = session_of(REPO / "results" / REFERENCE / f"{STEM}.csv")
    return sid, site / "bench" / FIG / REFERENCE / sid / "index.html"


@pytest.mark.slow
def test_a_session_page_has_the_lighter_layout_and_links_back(built_site, public):
    """Issue 38 (size): a session's permalink page has no navigation and no table of contents, says
    what it is, links back to the figure's latest results on this machine and to every machine,
    names its canonical URL where the site has an address (and none where it has not), and is
    listed in the sitemap. The machine page beside it keeps the full layout."""
    sid, page = session_page(built_site)
    local = _Layout(page.read_text(encoding="utf-8"))
    assert local.sidebars == [] and not local.misnested and local.open == []
    links = {text.strip(): href for href, text in local.links}
    assert links["The latest results on this machine"] == "../" and links["every machine"] == "../../"
    assert "One session's permalink" in page.read_text(encoding="utf-8")
    assert local.canonical == []  # no address configured: no canonical URL rather than an empty one
    machine = _Layout((built_site / "bench" / FIG / REFERENCE / "index.html").read_text(encoding="utf-8"))
    assert "navigation" in machine.sidebars and "toc" in machine.sidebars
    _, page = session_page(public)
    published = _Layout(page.read_text(encoding="utf-8"))
    url = f"{SITE}bench/{FIG}/{REFERENCE}/{sid}/"
    assert published.sidebars == [] and published.canonical == [url] and not published.misnested
    assert f"<loc>{url}</loc>" in (public / "sitemap.xml").read_text()


@pytest.mark.slow
def test_no_page_of_a_build_without_an_address_names_a_placeholder_or_a_made_up_url(built_site):
    for page in [*built_site.rglob("*.html"), built_site / "sitemap.xml"]:
        text = page.read_text(encoding="utf-8")
        assert "OWNER" not in text and "/bench/bench/" not in text, page
    assert "<loc>" not in (built_site / "sitemap.xml").read_text()


@pytest.mark.parametrize(("site_url", "expected"), [
    ("https://someone.github.io/jax-bench-honest/bench/", "https://someone.github.io/jax-bench-honest/bench/"),
    ("https://someone.github.io/jax-bench-honest/bench", "https://someone.github.io/jax-bench-honest/bench/"),
    ("https://example.org/", "https://example.org/"), ("https://example.org", "https://example.org/"),
    ("", ""), ("https://OWNER.github.io/jax-bench-honest/bench/", ""), ("http://127.0.0.1:8000/", ""),
    ("site/", ""), ("file:///tmp/site/", "")])
def test_a_permalink_is_the_address_and_the_page_path_joined_once(site_url, expected):
    path = urls.session_path(FIG, REFERENCE, LATER)
    assert path == f"bench/{FIG}/{REFERENCE}/{LATER}/"  # below the site root, whatever its address
    at = session_view.Where(lambda p: p, urls.public_base(site_url))  # as a page decides it, once
    assert at.public(path) == (expected + path if expected else "")
    assert session_view.address(at, path) == ((expected + path,) * 2 if expected else (path, f"<site address>/{path}"))
    assert urls.public_base("https://github.com/OWNER/jax-bench-honest") == ""


@pytest.mark.slow
def test_history_renders_on_every_figure_page_of_the_committed_site(built_site):
    for csv in (REPO / "results").glob("*/*.csv"):
        fig_id = "fig-" + csv.stem.replace("_", "-")
        sid = session_of(csv)
        for page in (built_site / "bench" / fig_id / "index.html",
                     built_site / "bench" / fig_id / csv.parent.name / "index.html"):
            text = page.read_text()
            assert 'class="bench-history"' in text and 'class="bench-svg bench-history-chart"' in text, page
            assert f"{sid}/" in text, page  # the point links the session's permalink
        assert (built_site / "bench" / fig_id / csv.parent.name / sid / "index.html").is_file()


# Kept sessions damaged: one figure of the reference machine whose results and chapter the shared
# damaged folder leaves whole (tests/conftest.py, damaged_results: built strict and lenient once a
# run, for several modules), with an earlier session kept, damaged, and one partial.
DAMAGED_STEM, DAMAGED_FIG, DAMAGED_CHAPTER = "recompile_causes", "fig-recompile-causes", "diagnosing/recompiles"
BAD, PARTIAL = "20200101T000000Z-dead", "20200102T000000Z-cafe"
DAMAGED_SESSIONS = [
    re.escape(f"sessions/{BAD}/{DAMAGED_STEM}.csv.gz:3: column 'median_s' is -1.0; a time must be positive"),
    re.escape(f"sessions/{PARTIAL}/{DAMAGED_STEM}.csv.gz:1: {DAMAGED_STEM}.runs.csv.gz is missing beside it")]


def add_damaged_sessions(root, scratch):
    """``root``'s reference machine with two earlier sessions of DAMAGED_STEM kept, one damaged
    (a summary's median negative, on line 3) and one partial (its runs file missing)."""
    path = root / REFERENCE / f"{DAMAGED_STEM}.csv"
    summary, _ = keep_as(path, root, BAD, scratch / "one")
    rows = gzip.decompress(summary.read_bytes()).decode().split("\n")
    cells = rows[2].split(",")
    cells[rows[0].split(",").index("median_s")] = "-1"  # the second summary, on line 3
    rows[2] = ",".join(cells)
    summary.write_bytes(gzip.compress("\n".join(rows).encode()))
    _, runs = keep_as(path, root, PARTIAL, scratch / "two")
    runs.unlink()


@pytest.mark.slow
def test_a_damaged_kept_session_fails_the_strict_build_with_file_and_line(damaged_strict_twice):
    """Each damaged session is a warning, named with file:line, that strict counts: the shared folder's
    other damage fails the build too, so the count of warnings strict aborted with is held to the
    warnings logged (a warning printed by a worker but not counted would pass the status check alone)."""
    proc = damaged_strict_twice[0][0]
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    for message in DAMAGED_SESSIONS:
        assert re.search(r"WARNING +- +[^\n]*" + message, proc.stderr), (message, proc.stderr[-3000:])
    logged = len(re.findall(r"^WARNING +- ", proc.stderr, re.M))
    assert f"Aborted with {logged} warnings in strict mode!" in proc.stdout, (logged, proc.stdout[-500:])


@pytest.mark.slow
def test_a_damaged_kept_session_is_an_error_box_and_nothing_else_is_affected(damaged_lenient):
    out, proc = damaged_lenient  # built lenient: exit status 0, no traceback (tests/conftest.py)
    page = html.unescape((out / "bench" / DAMAGED_FIG / REFERENCE / "index.html").read_text())
    assert 'class="bench-error"' in page and all(re.search(m, page) for m in DAMAGED_SESSIONS)
    assert "<circle" in page  # the good sessions still have their history
    assert 'class="bench-error"' not in (out / DAMAGED_CHAPTER / "index.html").read_text()
    other = out / "bench" / "fig-profile-top-ops" / REFERENCE / "index.html"
    assert 'class="bench-error"' not in other.read_text()


@pytest.mark.slow
def test_the_machine_pages_cite_block_links_the_data_at_the_commit_that_holds_it(public):
    """Issue 37: a link to the data at its commit. The rows' git_commit is the code's (the file is
    committed after it is measured), so the link names the last commit that changed the file."""
    rel = f"results/{REFERENCE}/{STEM}.csv"
    sha = subprocess.run(["git", "log", "-1", "--format=%H", "--", rel], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout.strip()
    if subprocess.run(["git", "status", "--porcelain", "--", rel], cwd=REPO, capture_output=True,
                      text=True).stdout.strip():
        pytest.skip(f"{rel} has uncommitted changes here")
    page = (public / "bench" / FIG / REFERENCE / "index.html").read_text()
    assert f'href="{REPO_URL}/blob/{sha}/{rel}"' in page and f"data      {REPO_URL}/blob/{sha}/{rel}" in page
    assert git_show(sha, rel) == (REPO / rel).read_bytes()  # that commit holds this very file


@pytest.mark.slow
def test_a_session_page_links_its_data_in_the_repository_not_in_the_site(public):
    """Issue 38 (size): a session's page links its data at the commit that holds it (the results file
    that held the session, every sample) and the site copies no kept session's files."""
    assert not list((public / "results").rglob("sessions"))
    checked = 0
    for page in sorted((public / "bench" / FIG / REFERENCE).glob("*/index.html")):
        sid = page.parent.name
        found = re.search(rf'Data: <a href="{re.escape(REPO_URL)}/blob/([0-9a-f]{{40}})/([^"]+)">', page.read_text())
        if found is None:  # a results file with uncommitted changes here has no commit to link
            assert subprocess.run(["git", "status", "--porcelain", "--", "results"], cwd=REPO, capture_output=True,
                                  text=True).stdout.strip(), page
            continue
        sha, rel = found.groups()
        assert (sid in rel and rel.endswith(".csv.gz")) or sid.encode() in git_show(sha, rel), (page, rel)
        checked += 1
    assert checked


def git_show(sha: str, rel: str) -> bytes:
    return subprocess.run(["git", "show", f"{sha}:{rel}"], cwd=REPO, capture_output=True, check=True).stdout


def test_data_commits_skip_changed_untracked_and_outside_files(tmp_path):
    from benchsite.core import gitdata

    run = functools.partial(subprocess.run, cwd=tmp_path, check=True, capture_output=True)
    run(["git", "init", "-q"])
    (tmp_path / "results" / "m").mkdir(parents=True)
    for name in ("a.csv", "b.csv"):
        (tmp_path / "results" / "m" / name).write_text(name)
    run(["git", "add", "."])
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"])
    head = run(["git", "rev-parse", "HEAD"], text=True).stdout.strip()
    (tmp_path / "results" / "m" / "b.csv").write_text("changed")
    (tmp_path / "results" / "m" / "c.csv").write_text("new")
    assert gitdata.data_commits(tmp_path, tmp_path / "results") == {"results/m/a.csv": head}
    assert gitdata.data_commits(tmp_path, tmp_path.parent) == {}


def test_a_sessions_data_link_is_the_commit_that_held_it_before_and_after_it_is_kept(tmp_path):
    """Issue 38 (size): a session's data is linked in the repository, not copied into the site. The
    link is the results file at the last commit that held the session (every sample): the same while
    the session is the latest and after a later one replaced it, so its page does not change; a
    session whose results file was never committed links its kept summaries at their commit."""
    from benchsite.model.catalog import Catalog
    from benchsite.model.figures import all_figures

    run = functools.partial(subprocess.run, cwd=tmp_path, check=True, capture_output=True, text=True)

    def commit(message: str) -> str:
        run(["git", "add", "-A"])
        run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message])
        return run(["git", "rev-parse", "HEAD"]).stdout.strip()

    def links(*sids):
        cat = Catalog.build(tmp_path / "results", figures=all_figures(REPO / "bench_scripts"),
                            bench_dir=tmp_path / "bench_scripts")
        return [cat.session_data_commit(FIG, REFERENCE, sid) for sid in sids]

    run(["git", "init", "-q"])
    (tmp_path / "bench_scripts").mkdir()
    source, csv = REPO / "results" / REFERENCE / f"{STEM}.csv", f"results/{REFERENCE}/{STEM}.csv"
    path = rewrite(source, tmp_path / csv, "20990101T000000Z-aaa1")
    first = commit("first session")
    assert links("20990101T000000Z-aaa1") == [(csv, first)]
    # make bench keeps the session and writes the next; both are committed together.
    archive.archive(path, tmp_path / "results")
    rewrite(source, path, "20990102T000000Z-aaa2")
    second = commit("second session")
    assert links("20990101T000000Z-aaa1", "20990102T000000Z-aaa2") == [(csv, first), (csv, second)]
    # A session measured and replaced before its results file was committed: its kept summaries.
    archive.archive(path, tmp_path / "results")
    rewrite(source, path, "20990103T000000Z-aaa3")
    archive.archive(path, tmp_path / "results")
    rewrite(source, path, "20990104T000000Z-aaa4")
    fourth = commit("third and fourth sessions")
    summaries = f"results/{REFERENCE}/sessions/20990103T000000Z-aaa3/{STEM}.csv.gz"
    assert links("20990101T000000Z-aaa1", "20990102T000000Z-aaa2", "20990103T000000Z-aaa3",
                 "20990104T000000Z-aaa4") == [(csv, first), (csv, second), (summaries, fourth), (csv, fourth)]
    rewrite(source, path, "20990105T000000Z-aaa5")  # not committed: no link
    assert links("20990105T000000Z-aaa5") == [None]
    # A session replaced twice before it was kept from git's history (tools/archive_session.py --git):
    # still the results file at the commit that held it, not its summaries.
    fifth = commit("fifth session, not kept when replaced")
    rewrite(source, path, "20990106T000000Z-aaa6")
    commit("sixth session")
    rewrite(source, path, "20990107T000000Z-aaa7")
    commit("seventh session")
    rewrite(source, path, "20990105T000000Z-aaa5")
    archive.archive(path, tmp_path / "results")
    rewrite(source, path, "20990107T000000Z-aaa7")
    commit("the fifth session kept from history")
    assert links("20990105T000000Z-aaa5") == [(csv, fifth)]
