"""The built site in headless Chromium: every page clean, anchors, tabs, copy, search.

Chromium comes from Debian (`apt-get install chromium`; .ci/run installs it). Without it these
tests skip locally and fail in CI.
"""

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from conftest import REFERENCE, REPO, build_site

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync", "--disable-quic"]

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"{CHROMIUM} missing in CI: .ci/run must apt-get install chromium")
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def serve():
    servers = []

    def start(root: Path) -> str:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"

    yield start
    for server in servers:
        server.shutdown()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    pg = context.new_page()
    pg.problems = []
    pg.on("console", lambda m: m.type == "error" and pg.problems.append(f"console: {m.text}"))
    pg.on("pageerror", lambda e: pg.problems.append(f"page error: {e}"))
    pg.on("request", lambda r: r.url.startswith(("http://127.0.0.1", "data:", "blob:"))
          or pg.problems.append(f"outside request: {r.url}"))
    yield pg
    context.close()


def site_pages(site: Path) -> list[str]:
    return sorted("/" + p.parent.relative_to(site).as_posix().removeprefix(".") + ("/" if p.parent != site else "")
                  for p in site.rglob("index.html") if "assets" not in p.parts)


def test_every_page_loads_clean_and_offline(built_site, serve, page):
    base = serve(built_site)
    pages = [p.replace("//", "/") for p in site_pages(built_site)]
    assert len(pages) >= 2
    for path in pages:
        response = page.goto(base + path)
        assert response.ok, path
        page.wait_for_load_state("networkidle")
        assert page.locator("h1").count() >= 1, path
    assert page.problems == []


def test_every_figure_anchor_resolves(built_site, serve, page):
    base = serve(built_site)
    targets = set()
    for path in site_pages(built_site):
        page.goto(base + path.replace("//", "/"))
        hrefs = page.eval_on_selector_all("a[href*='#fig-']", "els => els.map(e => e.href)")
        targets.update(hrefs)
        ids = page.eval_on_selector_all(".bench-figure[data-figure]", "els => els.map(e => e.dataset.figure)")
        targets.update(f"{page.url.split('#')[0]}#{i}" for i in ids)
    assert targets
    for url in sorted(targets):
        page.goto(url)
        anchor = url.split("#", 1)[1]
        assert page.locator(f"[id='{anchor}']").count() == 1, url
    assert page.problems == []


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


@pytest.fixture(scope="module")
def two_machine_site(tmp_path_factory):
    """The reference machine's committed results plus a copy relabelled as a second machine."""
    root = tmp_path_factory.mktemp("two")
    shutil.copytree(REPO / "results" / REFERENCE, root / "results" / REFERENCE)
    src = root / "results" / REFERENCE
    twin = root / "results" / "cpu-twin-2c"
    twin.mkdir()
    for csv in src.glob("*.csv"):
        (twin / csv.name).write_text(csv.read_text().replace(src.name, "cpu-twin-2c"))
    proc = build_site(root / "site", root / "results")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return root / "site"


def test_machine_tabs_switch(two_machine_site, serve, page):
    page.goto(serve(two_machine_site) + "/what-the-clock-caught/#fig-dispatch-vs-completion")
    figure = page.locator(".bench-figure[data-figure='fig-dispatch-vs-completion']")
    blocks = figure.locator(".tabbed-block")
    assert blocks.count() == 2
    assert blocks.nth(0).is_visible() and not blocks.nth(1).is_visible()
    figure.locator("label", has_text="cpu-twin-2c").click()
    assert blocks.nth(1).is_visible() and not blocks.nth(0).is_visible()
    assert "cpu-twin-2c" in blocks.nth(1).inner_text()
    assert page.problems == []


def test_lesson_notebook_renders_with_outputs_and_folds(built_site, serve, page):
    page.goto(serve(built_site) + "/lessons/benchmark-async-work/")
    assert page.locator(".jp-OutputArea-output, .output_area, .jp-RenderedText").count() > 0
    fold = page.locator("details").first
    assert fold.get_attribute("open") is None
    fold.locator("summary").click()
    assert fold.get_attribute("open") is not None
    assert page.locator("svg").count() >= 1  # the interval diagram
    assert page.problems == []
