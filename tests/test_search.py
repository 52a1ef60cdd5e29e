"""Search finds identifiers (issue 18): typed into the search box in Chromium, each of the site's
central names finds exactly the pages whose prose uses it.

The expected pages come from the built HTML, not a hand list: every page in the navigation, its
article's text without the elements marked ``data-search-exclude`` (generated figure panels).
mkdocs.yml's separator makes ``jax.`` a separator of its own, so ``jax.block_until_ready`` and
``x.block_until_ready()`` index the same word; a dotted query is therefore expected to find every
page that uses the function in either spelling, which includes every page that spells it in full.

Search ranks the teaching first (issue 37): each figure's code listing is marked
``data-search-exclude`` too, so a page is found through its prose, not through a script that only
calls the name, and for each name the chapter that explains it in prose is the first result, with a
prose snippet (not Python source) as the first thing under it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_browser import browser, serve, watched  # noqa: F401  (fixtures; skips without Chromium)

pytestmark = pytest.mark.slow  # Chromium, on the built site

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
IDENTIFIERS = ["block_until_ready", "jax.block_until_ready", "jax_log_compiles", "cost_analysis"]
# The chapter that teaches each name in prose (read from the pages, not derived from the ranking).
TAUGHT_IN = {"block_until_ready": "/asynchronous-dispatch/", "jax.block_until_ready": "/asynchronous-dispatch/",
             "jax_log_compiles": "/diagnosing/recompiles/", "cost_analysis": "/how-good-is-this-number/"}


class ArticleText(HTMLParser):
    """The text of a page's ``<article>``, without elements marked data-search-exclude."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []
        self.skipping = self.inside = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        skip, article = any(k == "data-search-exclude" for k, _ in attrs), tag == "article"
        self.stack.append((tag, skip, article))
        self.skipping += skip
        self.inside += article

    def handle_endtag(self, tag):
        while tag not in VOID and self.stack:
            name, skip, article = self.stack.pop()
            self.skipping -= skip
            self.inside -= article
            if name == tag:
                break

    def handle_data(self, data):
        if self.inside and not self.skipping:
            self.parts.append(data)


def nav_pages(site: Path) -> dict[str, str]:
    """URL path -> searchable prose, for every page in the navigation."""
    home = (site / "index.html").read_text()
    hrefs = {h for h in re.findall(r'<a href="([^"#]*)" class="md-nav__link', home)}
    out = {}
    for href in sorted(hrefs):
        parser = ArticleText()
        parser.feed((site / href.removeprefix(".").lstrip("/") / "index.html").read_text())
        out["/" + href.removeprefix(".").lstrip("/")] = "".join(parser.parts)
    return out


def expected_pages(prose: dict[str, str], identifier: str) -> set[str]:
    word = identifier.removeprefix("jax.")
    return {path for path, text in prose.items() if word in text}


def search(pg, query: str) -> tuple[int, set[str], dict]:
    """``query`` typed into the empty search box of the page ``pg`` shows (the home page), once its
    results stop changing: (the count of matching pages, the addresses listed, the first result:
    ``FIRST_RESULT``). The box is emptied first, and the last query's results are gone before a
    key is typed."""
    box = pg.locator(".md-search__input")
    box.click()
    box.fill("")
    pg.wait_for_selector(".md-search-result__item", state="detached")
    box.press_sequentially(query, delay=30)
    pg.wait_for_selector(".md-search-result__item", timeout=15000)
    first = settled_first_result(pg)
    meta = pg.locator(".md-search-result__meta").inner_text()
    count = int(re.match(r"(\d+) matching", meta).group(1)) if meta[0].isdigit() else 1
    hrefs = pg.eval_on_selector_all(".md-search-result__list > .md-search-result__item > a",
                                      "els => els.map(e => e.href)")
    return count, {urlsplit(h).path for h in hrefs}, first


FIRST_RESULT = """() => {
    const item = document.querySelector('.md-search-result__list > .md-search-result__item');
    const shown = [...item.querySelectorAll('article > *')]
        .filter(el => !el.matches('h1, h2, .md-search-result__icon, nav'));
    const first = shown[0];
    return {href: item.querySelector('a').href, meta: document.querySelector('.md-search-result__meta').innerText,
            tag: first ? first.tagName : null, marked: first ? first.querySelector('mark') !== null : false,
            text: first ? first.innerText.slice(0, 200) : null};
}"""


def settled_first_result(pg) -> dict:
    """The first result once the list stops changing (each typed key sends a query of its own)."""
    last = None
    for _ in range(20):
        now = pg.evaluate(FIRST_RESULT)
        if now == last:
            return now
        last = now
        pg.wait_for_timeout(250)
    return last


@pytest.fixture(scope="module")
def searched(built_site, serve, browser):  # noqa: F811
    """Each of IDENTIFIERS (and TAUGHT_IN) searched once (:func:`search`), one after another on the
    home page loaded once, in a page watched as ``page`` is: {identifier: (count, addresses, first
    result)}, and every problem seen. The tests below read the same searches. (Each search loaded
    the home page again, and Chromium built the index from search_index.json again: the same index,
    in the same worker code, a page load's CPU a search.)"""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = watched(context.new_page(), [])
    pg.goto(serve(built_site) + "/")
    found = {name: search(pg, name) for name in dict.fromkeys([*IDENTIFIERS, *TAUGHT_IN])}
    context.close()
    return found, pg.problems


@pytest.mark.parametrize("identifier", IDENTIFIERS)
def test_search_finds_every_page_that_uses_an_identifier(built_site, searched, identifier):
    prose = nav_pages(built_site)
    expected = expected_pages(prose, identifier)
    assert expected, f"no page uses {identifier}: the test would prove nothing"
    assert {p for p, t in prose.items() if identifier in t} <= expected
    (count, found, _), problems = searched[0][identifier], searched[1]
    assert count == len(expected), (identifier, sorted(found), sorted(expected))
    if count <= 10:  # the first page of results lists them all
        assert found == expected
    assert problems == []


def test_search_ranks_the_chapter_that_teaches_a_name_first_with_a_prose_snippet(built_site, searched):
    prose = nav_pages(built_site)
    for identifier, chapter in TAUGHT_IN.items():
        assert chapter in expected_pages(prose, identifier), (identifier, chapter)
        first = searched[0][identifier][2]
        assert urlsplit(first["href"]).path == chapter, (identifier, first)
        assert first["tag"] == "P" and first["marked"], (identifier, first)  # prose that names it, not a <pre>
    assert searched[1] == []
