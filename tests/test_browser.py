"""The built site as a reader meets it: every page read as written (headings, the files it loads,
figure anchors, the /bench index's links), and in headless Chromium each kind of page clean and
offline, anchors, tabs, copy, search, phones.

Chromium comes from Debian (`apt-get install chromium`; .ci/run installs it). Without it these
tests skip locally and fail in CI.
"""

import functools
import html.parser
import http.server
import json
import os
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import REFERENCE, REPO

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync", "--disable-quic"]

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"{CHROMIUM} missing in CI: .ci/run must apt-get install chromium")
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.slow  # Chromium, on a built site


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serving(handler):
    """A fixture body: ``start(root)`` serves ``root`` with ``handler`` on a free port (once a
    folder) and returns its URL; every server started is shut down when the fixture ends."""
    servers = {}  # root -> its server: one a folder (each shutdown waits out a poll of half a second)

    def start(root: Path) -> str:
        if root not in servers:
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     functools.partial(handler, directory=str(root)))
            threading.Thread(target=server.serve_forever, daemon=True).start()
            servers[root] = server
        return f"http://127.0.0.1:{servers[root].server_port}"

    yield start
    for server in servers.values():
        server.shutdown()


@pytest.fixture(scope="module")
def serve():
    yield from _serving(Quiet)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def watched(pg, problems: list[str]):
    """``pg`` reporting its console errors, page errors and requests outside localhost into ``problems``."""
    pg.problems = problems
    pg.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.on("request", lambda r: r.url.startswith(("http://127.0.0.1", "data:", "blob:"))
          or problems.append(f"outside request: {r.url}"))
    return pg


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    yield watched(context.new_page(), [])
    context.close()


def layout_context(browser, site: Path, **options):
    """A new context of ``browser`` for the tests of what a page lays out (widths, text sizes,
    scrolling), serving ``site``'s search index with no documents. Material's search worker builds
    its index from the whole of ``search/search_index.json`` on every page load (a quarter of
    Chromium's CPU time for a page here), and none of these tests reads it. The search itself runs
    on the whole index (test_search_finds_a_chapter, test_the_site_works_under_a_bench_prefix,
    tests/test_search.py), and the walk over each kind of page loads it as a reader's browser does."""
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    empty = json.dumps({**index, "docs": []})
    context = browser.new_context(**options)
    context.route("**/search/search_index.json",
                  lambda route: route.fulfill(body=empty, content_type="application/json"))
    return context


TABS = 6  # pages loading at once: a page waiting for the network to go quiet uses no CPU


def visit(pg, urls: list[str], until: str = "load"):
    """(url, response, tab) for each of ``urls``, in order, each tab loaded to ``until``. Up to
    :data:`TABS` pages load at once, in tabs of ``pg``'s context watched as ``pg`` is (its
    ``problems``): a walk over every page waits on each page's quiet half-second in parallel."""
    pool = [pg] + [watched(pg.context.new_page(), pg.problems) for _ in range(TABS - 1)]
    try:
        for start in range(0, len(urls), TABS):
            batch = list(zip(urls[start:start + TABS], pool))
            responses = [tab.goto(url, wait_until="commit") for url, tab in batch]
            for (url, tab), response in zip(batch, responses):
                tab.wait_for_load_state(until)
                yield url, response, tab
    finally:
        for tab in pool[1:]:
            tab.close()


def site_pages(site: Path) -> list[str]:
    return sorted("/" + p.parent.relative_to(site).as_posix().removeprefix(".") + ("/" if p.parent != site else "")
                  for p in site.rglob("index.html") if "assets" not in p.parts)


# --- every page, read as written; a browser on each kind of page ---------------------------------
# Every page of the built site is parsed (html.parser, a second or two for all of them) for what a
# reader's browser would find there: a heading, the ids links point at, the files it loads. The
# scripts the site adds (docs/assets/*.js) and the theme's run the same code on every page, so the
# browser opens each kind of page (below) rather than all of them: what differs from page to page
# of one kind is data, and the parse checks the data on every page.

LOADED = {("img", "src"), ("img", "srcset"), ("script", "src"), ("iframe", "src"), ("source", "src"),
          ("source", "srcset"), ("video", "src"), ("video", "poster"), ("audio", "src"), ("track", "src"),
          ("embed", "src"), ("object", "data"), ("input", "src"), ("image", "href"), ("image", "xlink:href"),
          ("use", "href"), ("use", "xlink:href")}  # (element, attribute) a browser fetches on its own
FETCHED_LINKS = {"stylesheet", "icon", "shortcut", "apple-touch-icon", "preload", "modulepreload", "prefetch",
                 "manifest"}
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)")


class _Facts(html.parser.HTMLParser):
    """What the tests read from one page as written: its <h1>s, every id, every link (and those in
    the /bench index), the figures it embeds and every address it makes the browser load."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.h1, self.ids, self.links, self.index, self.figures, self.loads = 0, [], [], [], [], []
        self._index_depth = 0  # open <div>s since the /bench index's own, while inside it
        self._style = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        self.h1 += tag == "h1"
        if a.get("id") is not None:
            self.ids.append(a["id"])
        if tag == "div" and (self._index_depth or "bench-index" in classes):
            self._index_depth += 1
        if tag == "a" and a.get("href") is not None:
            self.links.append(a["href"])
            if self._index_depth:
                self.index.append(a["href"])
        if "bench-figure" in classes and a.get("data-figure"):
            self.figures.append(a["data-figure"])
        for attr, value in a.items():
            if value is None:
                continue
            if (tag, attr) in LOADED:
                self.loads += [part.split()[0] for part in value.split(",") if part.strip()] if "srcset" in attr \
                    else [value]
            elif attr == "style":
                self.loads += CSS_URL.findall(value)
        if tag == "link" and a.get("href") and FETCHED_LINKS & set((a.get("rel") or "").lower().split()):
            self.loads.append(a["href"])
        self._style = tag == "style"

    def handle_endtag(self, tag):
        if tag == "div" and self._index_depth:
            self._index_depth -= 1
        self._style = False

    def handle_data(self, data):
        if self._style:
            self.loads += CSS_URL.findall(data)


def page_file(site: Path, address: str) -> Path | None:
    """The file the test server sends for ``address`` (a path below the site, #fragment dropped)."""
    path = site / urllib.parse.unquote(urllib.parse.urlsplit(address).path).lstrip("/")
    path = path / "index.html" if path.is_dir() else path
    return path if path.is_file() else None


@pytest.fixture(scope="module")
def pages(built_site) -> dict[str, dict]:
    """Every page of the built site (and its 404 page), parsed: its address below the site ->
    ``h1`` (how many), ``ids``, ``links``, ``index`` (the /bench index's links), ``figures`` and
    ``loads`` (every link and address resolved against the page's own), and its size in bytes."""
    found = {}
    for address in [*site_pages(built_site), "/404.html"]:
        file = page_file(built_site, address)
        facts = _Facts()
        facts.feed(file.read_text(encoding="utf-8"))
        facts.close()

        def resolved(refs):
            return [urllib.parse.urljoin(SITE + address, ref) for ref in refs]  # noqa: B023

        found[address] = {"h1": facts.h1, "ids": facts.ids, "links": resolved(facts.links),
                          "index": resolved(facts.index), "figures": facts.figures,
                          "loads": resolved(facts.loads), "size": file.stat().st_size}
    return found


SITE = "http://site.test"  # the origin the parsed pages' links are resolved against


def kind(address: str) -> str:
    """Which kind of page an address is: each kind is drawn by its own template or code path."""
    parts = [p for p in address.strip("/").split("/") if p]
    if address == "/404.html":
        return "404"
    if parts[:1] == ["bench"]:
        if parts[1:2] == ["changes"]:
            return "changes page"
        return ["/bench index", "figure page", "machine page", "session page"][min(len(parts) - 1, 3)]
    if parts[:1] == ["lessons"]:
        return "lesson"
    return "home" if not parts else "chapter"


def each_kind(pages: dict[str, dict]) -> list[str]:
    """Every chapter, lesson and special page (each is written by hand, with markers of its own),
    and of the pages generated by the hundred (/bench's figure, machine, session and changes pages)
    the first and the largest of each kind."""
    chosen = []
    for which in sorted({kind(a) for a in pages}):
        of_kind = sorted(a for a in pages if kind(a) == which)
        if which in ("figure page", "machine page", "session page", "changes page"):
            of_kind = sorted({of_kind[0], max(of_kind, key=lambda a: pages[a]["size"])})
        chosen += of_kind
    return chosen


def test_every_page_has_a_heading_and_loads_only_files_of_the_site(built_site, pages):
    """Read from every page as written: a heading, and every file the page makes a browser load
    (scripts, styles, images, icons, CSS urls) is a file of the site, none from another host (the
    site works offline; a browser reported a missing one as a console error)."""
    assert len(pages) >= 100
    outside, missing = [], []
    for address, seen in pages.items():
        assert seen["h1"] >= 1, address
        for url in seen["loads"]:
            if url.startswith(("data:", "blob:")) or url.startswith(SITE + address + "#"):
                continue
            if not url.startswith(SITE + "/"):
                outside.append((address, url))
            elif page_file(built_site, url.removeprefix(SITE)) is None:
                missing.append((address, url))
    assert outside == [] and missing == [], (outside[:5], missing[:5])


@pytest.fixture(scope="module")
def walk(built_site, serve, browser, pages):
    """Each kind of page (``each_kind``) loaded in Chromium until the network is quiet: what the
    tests read from each, and every problem seen on the way (``watched``)."""
    base = serve(built_site)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = watched(context.new_page(), [])
    seen = {}
    for url, response, tab in visit(pg, [base + a for a in each_kind(pages)], until="networkidle"):
        seen[url.removeprefix(base)] = {
            "ok": response.ok, "h1": tab.locator("h1").count(),
            "caps": tab.eval_on_selector_all(".bench-samples path[data-run]",
                                             "ps => ps.map(p => getComputedStyle(p).strokeLinecap)")}
    context.close()
    return seen, pg.problems


def test_each_kind_of_page_loads_clean_and_offline(walk, pages):
    seen, problems = walk
    assert {kind(a) for a in seen} == {kind(a) for a in pages} >= {
        "home", "chapter", "lesson", "404", "/bench index", "figure page", "machine page", "session page",
        "changes page"}
    for address, facts in seen.items():
        assert facts["ok"] or address == "/404.html", address
        assert facts["h1"] >= 1, address
    assert problems == []


def figure_targets(pages: dict[str, dict]) -> set[str]:
    """Every link to a figure (``#fig-…``, a machine's tab ``#fig-…--machine`` included) and every
    figure's own anchor, as addresses below the site."""
    targets = {link.removeprefix(SITE) for seen in pages.values() for link in seen["links"]
               if "#fig-" in link and link.startswith(SITE)}
    return targets | {f"{address}#{fig}" for address, seen in pages.items() for fig in seen["figures"]}


def test_every_figure_anchor_names_one_element(built_site, pages):
    """Every link to a figure, and every figure's own anchor: its page is there and the #fragment
    names one element in it (the tabs script opens a tab by that id)."""
    targets = figure_targets(pages)
    assert len(targets) >= 100
    for target in sorted(targets):
        address, _, anchor = target.partition("#")
        address = address if address in pages else address.rstrip("/") + "/"
        assert address in pages, target
        assert pages[address]["ids"].count(urllib.parse.unquote(anchor)) == 1, target


def test_a_figure_anchor_of_each_kind_opens_in_chromium(built_site, pages, serve, page):
    """A figure's anchor and a machine tab's, on each kind of page that has them, opened as a
    reader opens it (with its #fragment, so the tabs script and the theme act on it): the element
    is there once when the page has loaded, and nothing goes wrong. (Every other such anchor names
    one element in its page as written: test_every_figure_anchor_names_one_element.)"""
    by_kind = {}
    for target in sorted(figure_targets(pages)):
        address, _, anchor = target.partition("#")
        by_kind.setdefault((kind(address), "--" in anchor), []).append(target)
    chosen = sorted({t for found in by_kind.values() for t in (found[0], found[-1])})
    assert {k for k, _ in by_kind} >= {"chapter", "figure page"} and any(tab for _, tab in by_kind)
    server = serve(built_site)
    for url, _, tab in visit(page, [server + t for t in chosen]):
        anchor = url.split("#", 1)[1]
        assert tab.locator(f"[id='{anchor}']").count() == 1, url
    assert page.problems == []


def test_every_link_on_the_bench_index_resolves(built_site, pages):
    """Each link of the /bench index (every figure on every machine) reaches a page of the site, or
    a download, and its #fragment names one element there."""
    hrefs = pages["/bench/"]["index"]
    assert len(hrefs) >= 6
    for href in hrefs:
        address, _, anchor = href.removeprefix(SITE).partition("#")
        assert href.startswith(SITE + "/"), href
        if address.endswith(".csv.gz"):  # a download, not a page
            assert page_file(built_site, address) is not None, href
            continue
        assert address in pages, href
        if anchor:
            assert pages[address]["ids"].count(anchor) == 1, href


def test_the_walk_sees_what_goes_wrong_in_every_tab(tmp_path, serve, page):
    """``visit`` loads pages in several tabs at once: a console error, a page error or a request
    outside localhost in any of them, in the first batch or a later one, reaches ``problems``."""
    quiet = "<!doctype html><title>ok</title><h1>ok</h1>"
    bad = {3: "<script>console.error('three')</script>", TABS + 1: "<script>null.boom()</script>",
           TABS + 2: '<img src="http://192.0.2.1/x.png">'}
    urls = []
    for i in range(TABS + 3):
        (tmp_path / f"p{i}.html").write_text(quiet + bad.get(i, ""))
        urls.append(f"{serve(tmp_path) if not urls else urls[0].rsplit('/', 1)[0]}/p{i}.html")
    seen = [(url, response.ok, tab.locator("h1").count()) for url, response, tab in visit(page, urls)]
    assert [url for url, _, _ in seen] == urls and all(ok and h1 == 1 for _, ok, h1 in seen)
    assert any("three" in p for p in page.problems), page.problems
    assert any(p.startswith("page error") for p in page.problems), page.problems
    assert any("192.0.2.1" in p for p in page.problems), page.problems


def test_figure_shows_table_chart_and_provenance(built_site, serve, page):
    page.goto(serve(built_site) + "/what-the-clock-caught/#fig-dispatch-vs-completion")
    figure = page.locator(".bench-figure[data-figure='fig-dispatch-vs-completion']")
    assert figure.locator("table tbody tr").count() >= 3
    assert figure.locator("svg.bench-svg").first.is_visible()
    figure.locator(".bench-provenance summary").first.click()
    provenance = figure.locator(".bench-provenance").first
    assert provenance.get_attribute("open") is not None
    assert "jaxlib" in provenance.inner_text() and "measured (UTC)" in provenance.inner_text()


def test_code_copy_button_copies_the_script(built_site, serve, page):
    page.goto(serve(built_site) + "/what-the-clock-caught/")
    page.locator("button[data-md-type='copy']").first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "def measure(rec: Recorder)" in copied


def test_search_finds_a_chapter(built_site, serve, page):
    page.goto(serve(built_site) + "/")
    page.locator(".md-search__input").click()
    page.locator(".md-search__input").press_sequentially("dispatch", delay=50)
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    assert page.locator(".md-search-result__item").count() >= 1


def test_machine_tabs_switch(built_site, serve, page):
    """The committed results hold the figure on two machines: the reference's tab first, open."""
    (other,) = [p.parent.name for p in (REPO / "results").glob("*/dispatch_vs_completion.csv")
                if p.parent.name != REFERENCE]
    page.goto(serve(built_site) + "/what-the-clock-caught/#fig-dispatch-vs-completion")
    figure = page.locator(".bench-figure[data-figure='fig-dispatch-vs-completion']")
    blocks = figure.locator(".bench-tab-panel")
    assert blocks.count() == 2
    assert blocks.nth(0).is_visible() and not blocks.nth(1).is_visible()
    figure.locator("label", has_text=other).click()
    assert blocks.nth(1).is_visible() and not blocks.nth(0).is_visible()
    assert other in blocks.nth(1).inner_text()
    assert page.problems == []


@pytest.mark.parametrize("width", [390, 1280])
def test_a_machine_tab_link_lands_on_its_figures_title_with_that_tab_open(built_site, serve, browser, width):
    """A review link to one machine's tab of a chapter's figure opens that tab and shows the figure's
    title and caption, below the theme's header: what was measured comes before the machine's numbers,
    as for the figure's own anchor (the tabs script scrolls to the heading, not to the tab strip)."""
    (other,) = [p.parent.name for p in (REPO / "results").glob("*/dispatch_vs_completion.csv")
                if p.parent.name != REFERENCE]
    fig = "fig-dispatch-vs-completion"
    context = layout_context(browser, built_site, viewport={"width": width, "height": 844})
    pg = watched(context.new_page(), [])
    pg.goto(serve(built_site) + f"/what-the-clock-caught/#{fig}--{other}", wait_until="load")
    pg.wait_for_timeout(300)  # past the theme's own handling of the fragment
    assert pg.locator(f"[id='{fig}--{other}']").is_checked()
    header = pg.evaluate("document.querySelector('.md-header').getBoundingClientRect().bottom")
    heading = pg.locator(f"h3[id='{fig}']").bounding_box()
    caption = pg.locator(f".bench-figure[data-figure='{fig}'] .bench-caption").bounding_box()
    assert header - 1 <= heading["y"] < 844 / 2, (header, heading)
    assert caption["y"] < 844, caption
    assert pg.problems == []
    context.close()


def test_lesson_notebook_renders_with_outputs_and_folds(built_site, serve, page):
    page.goto(serve(built_site) + "/lessons/benchmark-async-work/")
    assert page.locator(".jp-OutputArea-output, .output_area, .jp-RenderedText").count() > 0
    # Whose outputs, under the title: the reference machine's stored run (results/<machine>/lessons/).
    note = page.locator(".lesson-whose")
    assert note.count() == 1 and note.is_visible() and REFERENCE in note.inner_text()
    title, note_box = page.locator("h1").first.bounding_box(), note.bounding_box()
    assert note_box["y"] > title["y"] and note_box["y"] < title["y"] + 400, (title, note_box)
    fold = page.locator("details").first
    assert fold.get_attribute("open") is None
    fold.locator("summary").click()
    assert fold.get_attribute("open") is not None
    assert page.locator("svg").count() >= 1  # the interval diagram
    assert page.problems == []


CHART_PAGE = "/what-the-clock-caught/"
# Rendered size of every chart text in CSS px: its font size times the scale its <svg> is drawn at.
CHART_TEXT_PX = """() => [...document.querySelectorAll('.bench-samples text, .bench-runs span')]
  .filter(t => t.getClientRects().length)
  .map(t => { const m = t.getScreenCTM ? t.getScreenCTM() : null;
              return parseFloat(getComputedStyle(t).fontSize) * (m ? Math.hypot(m.a, m.b) : 1); })"""
CHART_BOXES = """() => [...document.querySelectorAll('.bench-samples, .bench-samples svg, .bench-samples text')]
  .filter(e => e.getClientRects().length)
  .map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })"""


def test_charts_read_on_a_phone(built_site, serve, browser):
    context = layout_context(browser, built_site, viewport={"width": 390, "height": 844}, device_scale_factor=2)
    pg = context.new_page()
    pg.goto(serve(built_site) + CHART_PAGE)
    assert pg.locator(".bench-samples svg.bench-panel").count() >= 2
    sizes = pg.evaluate(CHART_TEXT_PX)
    assert sizes and min(sizes) >= 10, sorted(sizes)[:5]
    width = pg.evaluate("document.documentElement.clientWidth")
    boxes = pg.evaluate(CHART_BOXES)
    assert boxes and all(left >= -0.5 and right <= width + 0.5 for left, right in boxes), \
        [b for b in boxes if b[0] < -0.5 or b[1] > width + 0.5][:5]
    context.close()


def test_hovering_a_dot_shows_its_run_sample_and_time(built_site, serve, page):
    page.goto(serve(built_site) + CHART_PAGE)
    dot = page.locator(".bench-samples svg.bench-panel path[data-run]").first
    dot.scroll_into_view_if_needed()
    # The first dot of the path: its "M x y" in user units, through the panel's transform to the screen.
    x, y = dot.evaluate("""p => {
        const [x, y] = p.getAttribute('d').match(/^M(-?[\\d.]+) (-?[\\d.]+)/).slice(1).map(Number);
        const s = new DOMPoint(x, y).matrixTransform(p.ownerSVGElement.getScreenCTM());
        return [s.x, s.y]; }""")
    page.mouse.move(x, y)
    tip = page.locator(".bench-tip")
    tip.wait_for(state="visible")
    run = dot.get_attribute("data-run")
    assert re.search(rf"run {run} · sample \d+ · \d[\d.]* (s|ms|µs|ns)$", tip.inner_text()), tip.inner_text()
    page.mouse.move(1, 1)  # away from every chart: the tooltip goes
    assert not tip.is_visible()
    assert page.problems == []


# --- Reader experience (issue 18): a /bench prefix, phones, the run-it-yourself page ---------------

PREFIX_PAGES = ["/bench/", "/bench/what-the-clock-caught/", "/bench/bench/fig-dispatch-vs-completion/",
                "/bench/lessons/benchmark-async-work/"]


class Prefixed(Quiet):
    """The site at /bench/ and nothing else: a request outside the prefix is a 404."""

    def translate_path(self, path):
        return super().translate_path(path.removeprefix("/bench"))

    def send_head(self):
        if not (self.path == "/bench" or self.path.startswith("/bench/")):
            self.send_error(404)
            return None
        return super().send_head()


@pytest.fixture(scope="module")
def serve_under_bench():
    """The built site at /bench/ and nothing else: a request outside the prefix is a 404."""
    yield from _serving(Prefixed)


def test_the_site_works_under_a_bench_prefix(built_site, serve_under_bench, page):
    base = serve_under_bench(built_site)
    failed = []
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    for path in PREFIX_PAGES:
        assert page.goto(base + path).ok, path
        page.wait_for_load_state("networkidle")
    page.locator(".md-search__input").click()  # the search worker and its index load from the prefix too
    page.locator(".md-search__input").press_sequentially("dispatch", delay=30)
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    assert failed == [] and page.problems == []
    with pytest.raises(urllib.error.HTTPError, match="404"):  # the server really is prefixed
        urllib.request.urlopen(base + "/what-the-clock-caught/")


def phone_probes(site: Path) -> dict[str, tuple[str, ...]]:
    """What the phone tests (390 x 844, layout_context) read, page by page: {address: the names of
    the PROBES to run on it}. Every page in the navigation and a figure page: its width
    (test_no_page_scrolls_sideways_on_a_phone); the roofline, the key cells and every cell of a
    table, on the pages their tests name."""
    home = (site / "index.html").read_text()
    session = next(p.parent for p in sorted((site / "bench").glob(f"*/{REFERENCE}/*/index.html")))
    wanted = {
        "width": sorted({"/" + h.removeprefix(".").lstrip("/")
                         for h in re.findall(r'<a href="([^"#]*)" class="md-nav__link', home)})
        + ["/bench/fig-dispatch-vs-completion/"],
        "key_cells": KEY_PAGES + [f"/bench/fig-harness-vs-peers/{REFERENCE}/",
                                  f"/{session.relative_to(site).as_posix()}/"],
        "roofline": ROOFLINE_PAGES, "every_cell": EVERY_CELL_PAGES}
    probes = {}
    for probe in PROBES:  # in PROBES' order on each page: EVERY_CELL scrolls to the top, so it comes last
        for address in wanted[probe]:
            probes.setdefault(address, ())
            probes[address] += (probe,)
    return probes


@pytest.fixture(scope="module")
def phone_walk(built_site, serve, browser):
    """Each page the phone tests read (:func:`phone_probes`) loaded once at 390 x 844 in one
    layout_context until the network is quiet, and each probe its tests ask of it run there (each
    test loaded its own pages before, 32 loads for 22 pages): ({address: {probe: its result}}, every
    problem seen on the way)."""
    base = serve(built_site)
    probes = phone_probes(built_site)
    context = layout_context(browser, built_site, viewport={"width": 390, "height": 844})
    pg = watched(context.new_page(), [])
    seen = {}
    for url, _, tab in visit(pg, [base + a for a in probes], until="networkidle"):
        address = url.removeprefix(base)
        seen[address] = {probe: tab.evaluate(PROBES[probe]) for probe in probes[address]}
    context.close()
    return seen, pg.problems


def test_no_page_scrolls_sideways_on_a_phone(phone_walk):
    """No page in the navigation, nor a figure page, is wider than a phone; nothing goes wrong on any
    page the phone tests load."""
    seen, problems = phone_walk
    widths = {address: found["width"] for address, found in seen.items() if "width" in found}
    wide = {address: scroll for address, (scroll, inner) in widths.items() if scroll > inner + 1}
    assert len(widths) >= 10 and wide == {} and problems == []


def test_the_run_it_yourself_page_shows_wall_times_from_the_data(built_site, serve, page):
    page.goto(serve(built_site) + "/run-it-yourself/")
    rows = page.locator("#how-long-it-takes ~ table tbody tr, #how-long-it-takes ~ div table tbody tr")
    figures = {p.name for p in (built_site / "bench").iterdir() if p.name.startswith("fig-")}
    assert rows.count() == len(figures)
    cells = [rows.nth(i).locator("td").nth(2).inner_text() for i in range(rows.count())]
    secs = r"(\d+(\.\d)? s|\d+ min \d+ s)"  # a recorded run wall time has a tenth; a gap is whole seconds
    median = r"(\d+(\.\d|\.\d{3})? s|\d+ min \d+ s)"  # to the millisecond where a tenth would read as the budget
    assert all(re.fullmatch(rf"{median}( \[{secs}\.\.{secs}\])?", c) for c in cells), cells
    text = page.locator("article").text_content()  # the install lines sit in tabs, two of them hidden
    assert re.search(r"Whole suite, estimated .*: (\d+ min )?\d+ s", text)
    assert re.search(r"Session \d{8}T\d{6}Z-\w+: \d+ figures?, \d+ runs? kept, (\d+ min )?\d+ s", text)
    assert "jax[cuda12]" in text and "jax[cuda13]" in text and "jax[tpu]" in text
    assert page.problems == []


def test_every_chart_draws_its_dots(walk, pages):
    """A dot is a zero-length stroke: without round caps it draws nothing. A page-wide stylesheet
    (matplotlib's SVG brings "*{stroke-linecap: butt}") must not take them away. Read on every
    chapter and the lesson (each has its own stylesheets and outputs) and on each kind of /bench
    page (the same charts as the chapters, on lighter pages): the walk above."""
    seen, _ = walk
    assert {a for a in pages if kind(a) in ("chapter", "lesson")} <= set(seen)
    for address, facts in seen.items():
        assert set(facts["caps"]) <= {"round"}, (address, set(facts["caps"]))
    assert sum(len(facts["caps"]) for facts in seen.values())


WIDE_FIGURES = """() => [...document.querySelectorAll('.bench-timeline, .bench-roofline')]
  .filter(f => f.getClientRects().length)
  .map(f => { const texts = [...f.querySelectorAll('svg text')].filter(t => t.getClientRects().length)
                .map(t => { const m = t.getScreenCTM();
                            return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); });
              return {cls: f.className, box: f.clientWidth, drawn: f.scrollWidth, smallest: Math.min(...texts)}; })"""


@pytest.mark.parametrize("width", [390, 960, 1280])
def test_wide_figures_fit_a_desktop_and_stay_legible_on_a_phone(built_site, serve, browser, width):
    """The trace timeline and the roofline keep their text at 10 px or more at every width (on a
    phone the timeline scrolls inside its box rather than shrink; the roofline draws its narrow
    layout), and at a desktop's content width (686 px, the narrowest with both sidebars) they fit
    without a scroll bar; the roofline fits without one at every width."""
    context = layout_context(browser, built_site, viewport={"width": width, "height": 900})
    pg = context.new_page()
    figures = []
    for path in ("/diagnosing/gaps-and-residuals/", "/how-good-is-this-number/"):
        pg.goto(serve(built_site) + path)
        figures += pg.evaluate(WIDE_FIGURES)
    context.close()
    assert {"bench-timeline", "bench-roofline"} <= {c for f in figures for c in f["cls"].split()}
    assert all(f["smallest"] >= 10 for f in figures), figures
    assert all(f["drawn"] <= f["box"] for f in figures if width >= 960 or "bench-roofline" in f["cls"]), figures


# A compare table's machine column (the third) with a stale machine's mark in every cell, as
# templates/compare.html writes it: the table's width and each cell's mark against its value's line.
STALE_MARKS = """() => {
  const t = [...document.querySelectorAll('table.bench-compare')].find(t => t.getClientRects().length);
  const width = () => t.getBoundingClientRect().width;
  const before = width();
  const cells = [...t.querySelectorAll('tbody tr')].map(r => r.children[2]);
  for (const c of cells) if (!c.querySelector('.bench-stale-mark')) {
    const mark = document.createElement('strong');
    mark.className = 'bench-stale-mark';
    mark.textContent = '\u26a0\u00a0stale';
    c.append(' ', mark);
  }
  return {before, after: width(), cards: getComputedStyle(t).display === 'block',
          lines: cells.map(c => { const m = c.querySelector('.bench-stale-mark').getBoundingClientRect();
            const r = document.createRange(); r.selectNodeContents(c); const first = r.getClientRects()[0];
            return {below: m.top >= first.bottom - 1,
                    beside: m.top < first.bottom - 1 && m.left >= first.right - 1}; })};
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_a_stale_mark_never_widens_a_compare_table(built_site, serve, browser, width):
    """A stale machine's mark made each of its cells about 54 px wider (the cells do not wrap), and
    the verdicts of a table that had just fitted went out of its scroll box: "not a result yet" read
    "not a resul" at 1280 px. In a table the mark goes under its value, so the table is as wide with
    it as without; on a phone's card it stays beside the value."""
    context = layout_context(browser, built_site, viewport={"width": width, "height": 900})
    pg = context.new_page()
    pg.goto(serve(built_site) + "/bench/fig-host-device-overlap/")
    found = pg.evaluate(STALE_MARKS)
    context.close()
    assert found["lines"] and found["cards"] == (width == 390)
    if width == 390:
        assert all(c["beside"] for c in found["lines"]), found
    else:
        assert found["after"] == found["before"] and all(c["below"] for c in found["lines"]), found


# Everything the roofline shows, each with its box on screen: the legend's entries, and in the
# drawing that is displayed its roofs, dots and labels; the figure's box and the window's width.
ROOFLINE_PAGES = ["/how-good-is-this-number/", "/bench/fig-machine-peak/"]
ROOFLINE_PARTS = """() => [...document.querySelectorAll('.bench-roofline')].filter(f => f.getClientRects().length)
  .map(f => { const svg = [...f.querySelectorAll('svg.bench-svg')].filter(s => s.getClientRects().length);
    const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const parts = sel => svg.flatMap(s => [...s.querySelectorAll(sel)]).map(box);
    return {figure: box(f), window: document.documentElement.clientWidth, drawings: svg.length,
            legend: [...f.querySelectorAll('.bench-roofline-legend span')].map(box),
            roofs: parts('g[fill=none] path'), dots: parts('circle'), labels: parts('g > text')}; })"""


def test_the_roofline_shows_its_roofs_dots_labels_and_legend_on_a_phone(phone_walk):
    """At 390 px the roofline showed only its memory roof: the drawing kept 680 px and scrolled
    sideways in its box, with the compute roofs, the matmul dots and the legend's end outside it.
    Now every roof, dot, label and legend entry lies inside the figure's box and the window, with
    no scrolling, and no two labels overlap or cover another dot."""
    figures = [f for address in ROOFLINE_PAGES for f in phone_walk[0][address]["roofline"]]
    assert len(figures) >= 2
    for f in figures:
        assert f["drawings"] == 1 and f["roofs"] and f["dots"] and f["labels"] and f["legend"], f
        left, right = max(f["figure"][0], 0), min(f["figure"][2], f["window"])
        outside = [b for part in ("legend", "roofs", "dots", "labels") for b in f[part]
                   if b[0] < left - 0.5 or b[2] > right + 0.5]
        assert outside == [], (outside, f["figure"])
        apart = lambda a, b: a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]  # noqa: E731
        labels, dots = f["labels"], f["dots"]
        assert all(apart(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]), labels
        assert all(apart(label, dot) for label in labels for dot in dots), (labels, dots)


# Each scrolling box of ours (how wide it is, how wide its content scrolls, its widest table, and
# whether Material's scroll box sits inside it), and each of Material's scroll boxes around a plain
# table in our figures and boxes (whether it is shaded, and whether its table paints over the shade).
SCROLL_BOXES = """() => {
  const shown = [...document.querySelectorAll('.bench-scroll')].filter(e => e.getClientRects().length);
  const material = [...document.querySelectorAll(
    '.bench-figure .md-typeset__scrollwrap, .bench-scroll > .md-typeset__scrollwrap')]
    .filter(e => e.getClientRects().length);
  const opaque = t => { const s = getComputedStyle(t);
                        return s.backgroundColor !== 'rgba(0, 0, 0, 0)' || s.backgroundImage !== 'none'; };
  const widest = e => Math.max(...[...e.querySelectorAll('table')].map(t => t.getBoundingClientRect().width));
  return {ours: shown.map(e => ({cls: e.className, box: e.clientWidth, drawn: e.scrollWidth,
                                 inner: !!e.querySelector(':scope > .md-typeset__scrollwrap'),
                                 table: widest(e)})),
          material: material.map(w => ({box: w.clientWidth, drawn: w.scrollWidth,
                                        cards: !!w.querySelector('table[data-cards]'),
                                        shaded: getComputedStyle(w).backgroundImage.includes('radial-gradient'),
                                        covered: [...w.querySelectorAll('table')].some(opaque)}))};
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_a_table_scrolls_in_one_box_which_is_shaded_only_when_columns_are_hidden(built_site, serve, browser,
                                                                                 width):
    """Material wraps a plain <table> in a scroll box of its own with -0.8rem margins, and the table
    scrolls in it, not in itself. Inside one of ours (a session page's tables, the roofline tables)
    those margins made our box 16 px wider than its width, so it scrolled and showed the shade that
    says columns are hidden where none were; and the shade on the table itself never showed, so a
    table cut off at a phone's edge did not say so. Now Material's box scrolls, shaded, with the
    table drawn over its background transparent, and ours does not scroll around it. At 390 px a
    figure table of four or more columns is one card a row (it no longer scrolls, so none is cut off
    there: that replaces this test's old "some table is cut off at 390 px, and says so")."""
    session = next(p.parent for p in sorted((built_site / "bench").glob(f"*/{REFERENCE}/*/index.html")))
    context = layout_context(browser, built_site, viewport={"width": width, "height": 900})
    pg = context.new_page()
    ours, material = [], []
    for path in (f"/{session.relative_to(built_site).as_posix()}/", "/how-good-is-this-number/", CHART_PAGE):
        pg.goto(serve(built_site) + path)
        found = pg.evaluate(SCROLL_BOXES)
        ours, material = ours + found["ours"], material + found["material"]
    context.close()
    assert {"bench-scroll", "bench-roofline-table bench-scroll"} <= {b["cls"] for b in ours}
    assert any(b["inner"] for b in ours) and material
    assert [b for b in ours if (b["inner"] or b["table"] <= b["box"]) and b["drawn"] > b["box"]] == []
    assert [b for b in material if not b["shaded"] or b["covered"]] == []
    if width == 390:  # a figure table of four or more columns is one card a row there: none is cut off
        assert any(b["cards"] for b in material) and [b for b in material if b["cards"] and b["drawn"] > b["box"]] == []


# The verdict rules' simulated rates on /verdicts/ (not the A/A table): for each table, whether it
# is cards, the distinct tops of each body row's cells, the most lines any cell's text takes, and
# each box it scrolls in (Material's, ours) as [its width, the width of what it holds], shaded or not.
VERDICT_RATES = """() => [...document.querySelectorAll('.bench-verdict-rates:not(.bench-aa-rates) table')].map(t => {
  const lines = c => { const r = document.createRange(); r.selectNodeContents(c);
                       return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; };
  const rows = [...t.querySelectorAll('tbody tr')], top = c => Math.round(c.getBoundingClientRect().top);
  const wrap = t.closest('.md-typeset__scrollwrap'), ours = t.closest('.bench-scroll');
  return {cards: t.hasAttribute('data-cards'), rows: rows.length,
          tops: Math.max(...rows.map(r => new Set([...r.children].map(top)).size)),
          lines: Math.max(...rows.flatMap(r => [...r.children].map(lines))),
          boxes: [wrap, ours].map(b => b && [b.clientWidth, b.scrollWidth]),
          shaded: !!wrap && getComputedStyle(wrap).backgroundImage.includes('radial-gradient')}; })"""


@pytest.mark.parametrize("width", [390, 1280])
def test_the_verdict_rate_tables_are_tables_read_by_their_columns_with_nothing_cut_off(built_site, serve, browser,
                                                                                       width):
    """The equivalence table on /verdicts/ was 33 px wider than its box at 1280 px, its last column
    (false equivalence at 1.5 margins) cut off, its first column (the rule in words) three lines tall
    on every row; at 390 px bench-cards.js made every such table cards, 18 of them 4,600 px tall under
    prose that says "Read it by its columns". Now each is a table at both widths (a row's cells side by
    side, each one line), its rules heading groups of rows, and nothing of it scrolls out of sight: not
    at 1280 px, and not at 390 px, where bench.css tightens its cells. Its box is the site's shaded
    scroll box (.bench-scroll), which says so should a narrower screen hide a column."""
    context = layout_context(browser, built_site, viewport={"width": width, "height": 900})
    pg = context.new_page()
    pg.goto(serve(built_site) + "/verdicts/")
    tables = pg.evaluate(VERDICT_RATES)
    context.close()
    assert [t["rows"] for t in tables] == [2 + 6, 2 + 18] * 2, tables  # the measured noise's, the model's
    assert [t for t in tables if t["cards"] or t["tops"] != 1 or t["lines"] != 1] == [], tables
    assert [t for t in tables if not t["shaded"] or any(b is None or b[1] > b[0] for b in t["boxes"])] == [], tables


# Every cell of a table's key column (a ratio, a verdict, a roofline's bound and share: found by
# its header, so that a table without the markup is checked too) on a figure, a /bench page or a
# session page's changes: its box on screen, the window's width and how far anything scrolled.
KEY_PAGES = ["/what-the-clock-caught/", "/how-good-is-this-number/", "/timing-sharded-programs/", "/jax-upgrade/",
             "/bench/fig-harness-vs-peers/"]  # and the reference's page of that figure, and a session page
KEY_CELLS = """() => {
  const key = h => /^(ratio|verdict|bound by|% of )/.test(h) || h.includes(' / ');
  const cells = [];
  for (const t of document.querySelectorAll('.bench-figure table, .bench-scroll table, .md-typeset__table table')) {
    if (!t.getClientRects().length || t.closest('.bench-provenance')) continue;
    const head = [...t.querySelectorAll('thead th')].map(h => h.textContent.trim());
    if (head.length < 4) continue;
    head.forEach((h, i) => { if (!key(h)) return;
      for (const r of t.querySelectorAll('tbody tr')) { const c = r.children[i]; if (!c) continue;
        const b = c.getBoundingClientRect(); cells.push([head.join('|').slice(0, 60), h, b.left, b.right]); } });
  }
  const scrolled = [...document.querySelectorAll('*')].filter(e => e.scrollLeft > 0).length + scrollX;
  return {cells, width: document.documentElement.clientWidth, scrolled};
}"""


def test_every_figure_tables_key_column_is_on_a_phones_screen(phone_walk):
    """At 390 px a figure table of four or more columns scrolled sideways with its ratio or verdict
    (the column the table is read for) off screen. On a phone such a table is one card a row, key
    cells first: every key cell lies within the window with nothing scrolled, on a chapter's figure
    tables, a roofline's, a /bench figure's comparisons across sessions and a changes page's."""
    seen, off = set(), []
    for address, probes in phone_walk[0].items():
        if "key_cells" not in probes:
            continue
        found = probes["key_cells"]
        assert found["scrolled"] == 0, address
        seen |= {header for _, header, _, _ in found["cells"]}
        off += [(address, *c) for c in found["cells"] if c[2] < -0.5 or c[3] > found["width"] + 0.5]
    assert len([p for p in phone_walk[0].values() if "key_cells" in p]) == len(KEY_PAGES) + 2
    assert {"ratio", "verdict", "% of measured ceiling"} <= seen and any(" / " in h for h in seen), seen
    assert off == [], off[:8]


HISTORY_LABELS = """() => [...document.querySelectorAll('.bench-history-chart')].filter(s => s.getClientRects().length)
  .map(s => { const box = s.getBoundingClientRect();
    return {box: [box.left, box.right], labels: [...s.querySelectorAll('text[text-anchor=middle]')]
      .map(t => { const r = t.getBoundingClientRect();
                  return [Math.round(r.top), r.left, r.right, t.textContent]; })}; })"""


@pytest.mark.parametrize("width", [390, 1280])
def test_history_chart_labels_stay_inside_and_apart(built_site, serve, browser, width):
    """The dates under a history chart: none cut off at the chart's edge, none running into the
    next (seven sessions put the last date half outside and the dates 1 px apart)."""
    counts = {}  # the machine page with the most kept sessions, on any machine
    for page in sorted((built_site / "bench").glob("*/*/index.html")):
        counts[page] = len(list(page.parent.glob("*/index.html")))
    most = max(counts, key=counts.get)
    assert counts[most] >= 7
    context = layout_context(browser, built_site, viewport={"width": width, "height": 900})
    pg = context.new_page()
    pg.goto(serve(built_site) + f"/{most.parent.relative_to(built_site).as_posix()}/")
    charts = pg.evaluate(HISTORY_LABELS)
    context.close()
    assert charts and all(len(c["labels"]) >= 4 for c in charts)
    for chart in charts:
        left, right = chart["box"]
        assert all(left - 0.5 <= a and b <= right + 0.5 for _, a, b, _ in chart["labels"]), chart
        for line in {top for top, *_ in chart["labels"]}:
            spans = sorted((a, b) for top, a, b, _ in chart["labels"] if top == line)
            assert all(b1 + 2 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:])), chart


LESSON = "/lessons/benchmark-async-work/"
# Each lesson output box that scrolls sideways (whether shaded), and the contrast of every coloured
# span of the printed source against the background it is drawn on (WCAG's ratio).
LESSON_OUTPUTS = """() => {
  const rgb = c => c.match(/[\\d.]+/g).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).slice(0, 3).map(v => v / 255)
    .map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const behind = e => { for (; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor;
    if (rgb(c).length < 4 || rgb(c)[3] > 0) return c; } return 'rgb(255, 255, 255)'; };
  const over = (c, b) => { const [r, g, bl, a = 1] = rgb(c), u = rgb(b);  // c drawn over b
    return `rgb(${[r, g, bl].map((v, i) => v * a + u[i] * (1 - a)).join(', ')})`; };
  const ratio = (c, b) => { const [x, y] = [lum(over(c, b)), lum(b)].sort((p, q) => q - p);
                            return (x + 0.05) / (y + 0.05); };
  const spans = [...document.querySelectorAll('.jupyter-wrapper .highlight pre[style] span[style]')]
    .filter(s => s.textContent.trim());
  return {scrolling: [...document.querySelectorAll('.jupyter-wrapper .jp-OutputArea-output')]
            .filter(o => o.scrollWidth > o.clientWidth + 1)
            .map(o => ({tables: o.querySelectorAll('table').length,
                        shaded: getComputedStyle(o).backgroundImage.includes('radial-gradient'),
                        opaque_rows: [...o.querySelectorAll('tr')].filter(r => rgb(getComputedStyle(r).backgroundColor)
                          .slice(3).concat([1])[0] === 1).length})),
          contrast: spans.map(s => [s.textContent.slice(0, 20), ratio(getComputedStyle(s).color, behind(s))])};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_lesson_outputs_say_when_columns_are_hidden_and_its_source_reads_in_both_schemes(built_site, serve, browser,
                                                                                         scheme):
    """On a phone the lesson's tables scroll in their output box; that box shows the shade that says
    columns are hidden, as the site's own tables do, on every row (no opaque stripe over it). On the
    dark scheme the source the lesson prints (Pygments, inline colours for a light page: blue names
    measured 1.8:1 there) keeps WCAG's 4.5:1; on the light one it is Pygments' default style as
    stored (comments 4.46:1)."""
    context = layout_context(browser, built_site, viewport={"width": 390, "height": 844}, color_scheme=scheme)
    pg = context.new_page()
    pg.goto(serve(built_site) + LESSON)
    found = pg.evaluate(LESSON_OUTPUTS)
    context.close()
    tables = [o for o in found["scrolling"] if o["tables"]]
    assert tables and all(o["shaded"] and not o["opaque_rows"] for o in tables), found["scrolling"]
    assert len(found["contrast"]) > 50
    assert [c for c in found["contrast"] if c[1] < (4.5 if scheme == "dark" else 4.3)] == []


# The lesson's SVG outputs: each image's drawn and own width, its output box's, and its alt text.
LESSON_IMAGES = """() => [...document.querySelectorAll('.jupyter-wrapper .jp-RenderedSVG > img')].map(i => {
  const box = i.parentElement;
  return {alt: i.alt, drawn: i.getBoundingClientRect().width, own: i.naturalWidth,
          box: box.clientWidth, scrolls: box.scrollWidth > box.clientWidth + 1}; })"""


@pytest.mark.parametrize("width", [390, 1280])
def test_lesson_images_keep_a_readable_width_on_a_phone_and_say_what_they_show(built_site, serve, browser, width):
    """Review6: the interval diagram and the report chart, shrunk to a phone's column, had text of 4
    to 8 px, and their alt text was nbconvert's "No description has been provided for this image".
    On a phone each keeps its own width and scrolls inside its output box (the page does not: the
    phone walk's test_no_page_scrolls_sideways_on_a_phone); on a desktop each fits its box."""
    context = layout_context(browser, built_site, viewport={"width": width, "height": 844})
    pg = context.new_page()
    pg.goto(serve(built_site) + LESSON)
    images = pg.evaluate(LESSON_IMAGES)
    wide = pg.evaluate("() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1")
    context.close()
    assert len(images) == 2 and not wide, images
    assert all(i["alt"] and "No description" not in i["alt"] for i in images), images
    if width < 720:
        assert all(abs(i["drawn"] - i["own"]) < 1 and i["own"] > i["box"] and i["scrolls"] for i in images), images
    else:
        assert all(i["drawn"] <= i["box"] + 0.5 and not i["scrolls"] for i in images), images


EVERY_CELL_PAGES = ["/diagnosing/recompiles/", "/bench/fig-dispatch-vs-completion/", "/bench/", "/verdicts/",
                    "/diagnosing/profiling/"]
EVERY_CELL = """() => { window.scrollTo(0, 0);
  const tables = [...document.querySelectorAll('.md-typeset table')].filter(t => !t.closest('.jupyter-wrapper'));
  const cells = tables.flatMap(t => [...t.querySelectorAll('tbody td')])
    .filter(c => c.getClientRects().length)
    .map(c => { const r = c.getBoundingClientRect();
                return [c.textContent.trim().slice(0, 40), r.left, r.right]; });
  const blank = tables.filter(t => t.hasAttribute('data-cards'))
    .flatMap(t => [...t.querySelectorAll('tbody td')])
    .filter(c => c.getClientRects().length && !c.textContent.trim() && !c.children.length)
    .map(c => [c.getAttribute('data-label'), c.parentElement.textContent.trim().slice(0, 60)]);
  return {cells, blank, width: document.documentElement.clientWidth,
          cards: tables.filter(t => t.hasAttribute('data-cards')).length}; }"""


def test_every_table_of_four_columns_or_more_is_read_without_scrolling_on_a_phone(phone_walk):
    """Issue 37: the figure tables became cards at 390 px, while the tables written as Markdown (a
    chapter's own, /bench's machines and index tables, the verdicts page) still hid their last
    columns, "vs the reference" among them. bench-cards.js labels every such table, so every cell
    of every table lies within the window."""
    off, cards = [], 0
    for address in EVERY_CELL_PAGES:
        found = phone_walk[0][address]["every_cell"]
        cards += found["cards"]
        off += [(address, *c) for c in found["cells"] if c[1] < -0.5 or c[2] > found["width"] + 0.5]
    assert cards >= 5 and off == [], off[:8]


def test_no_card_on_a_phone_shows_a_label_with_nothing_after_it(phone_walk):
    """/bench's index leaves a figure's own cells (its title, its chapter) blank under its first
    machine: a table reads them as the row above's, but a card at 390 px showed "chapter" with nothing
    after it for each figure's next machine. bench.css leaves an empty cell out of its card."""
    blank = [(address, *c) for address in EVERY_CELL_PAGES for c in phone_walk[0][address]["every_cell"]["blank"]]
    rows = phone_walk[0]["/bench/"]["every_cell"]["cells"]
    assert blank == [] and len(rows) > 50, blank[:8]


# The phone walk's probes (phone_walk), in the order they run on a page.
PROBES = {"width": "[document.documentElement.scrollWidth, innerWidth]", "key_cells": KEY_CELLS,
          "roofline": ROOFLINE_PARTS, "every_cell": EVERY_CELL}
