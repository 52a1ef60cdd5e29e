"""No page types a measured number by hand: measurements come from markers.

Every page under ``docs/`` is read as source Markdown. What is not prose is
removed first: fenced code, inline code, HTML comments (the ``bench:`` markers
are comments, so whatever they will render is never seen here), HTML tags,
attribute lists such as heading ids, link targets and URLs, front matter. What
is left fails the test when it reads as a measured quantity:

* a number with a time unit: ``5.9 ms``, ``130 µs``, ``2 s``, ``3 seconds``;
* a number with a rate unit: ``12 GB/s``, ``3 TFLOP/s``;
* a percentage: ``21 %``, ``21%``, ``21 percent``;
* a ratio: ``11×``, ``11x``, ``a factor of 38``, ``3 times faster`` (but not ``1×``, the
  reference a ratio is read against: "below 1× means faster");
* a typed spread: ``[11.9..13.0]``.

Counts and sizes that define an experiment (``50 calls``, ``512 wide``,
``R = 5``, ``4096x4096``) are parameters, not results, and pass. A bare number
in a table cell cannot be told apart from a parameter and is not caught.

A line that must state a configured time (a budget, a timeout) can carry
``<!-- typed-number: why -->``; the reason is required, so every exception is
visible and reviewed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"

DIGITS = r"\d+(?:[.,]\d+)*"
NUM = rf"(?<![\w.]){DIGITS}"  # not the digits inside x86, fp16, H200 or v0.10.2
TIME_UNIT = (r"(?:ns|µs|μs|us|ms|s|secs?|seconds?|milliseconds?|microseconds?|nanoseconds?"
             r"|minutes?|hours?)\b")
RATE_UNIT = r"(?:[kKMGTP]i?B/s|[kMGTP]?FLOP(?:/s|S)|[kMGTP]?flop/s)(?!\w)"
MEASURED = re.compile("|".join([
    rf"{NUM}\s*{TIME_UNIT}",
    rf"{NUM}\s*{RATE_UNIT}",
    rf"{NUM}\s*(?:%|percent\b|per cent\b)",
    rf"(?!1\s*[×x](?!\w)){NUM}\s*[×x](?!\w)(?!\s*\d)",  # 11x, 1.5 ×; not 512x512, 2 x 2, or 1×
    rf"\bfactor of\s+{NUM}",
    rf"{NUM}\s+times\s+(?:faster|slower|longer|shorter|more|less|as)\b",
    rf"\[\s*{NUM}\s*\.\.\s*{DIGITS}",
]), re.IGNORECASE)

COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
ALLOW = re.compile(r"<!--\s*typed-number:\s*\S.*?-->")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
NOT_PROSE = [
    re.compile(r"(`+).+?\1"),  # inline code
    re.compile(r"<[^>\n]+>"),  # HTML tags
    re.compile(r"\{[^{}\n]*\}"),  # attribute lists: { #fig-id }, {: .class }
    re.compile(r"\]\([^)\n]*\)"),  # link targets
    re.compile(r"https?://\S+"),  # bare URLs
]


def _blank(match: re.Match) -> str:
    """Replace a match by its newlines only, so line numbers stay true."""
    return "\n" * match.group(0).count("\n")


def _without_front_matter(text: str) -> str:
    if not text.startswith("---\n"):
        return text
    end = text.find("\n---", 4)
    return text if end < 0 else "\n" * text[:end + 4].count("\n") + text[end + 4:]


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, prose) for every line outside code, comments and markup."""
    text = COMMENT.sub(_blank, _without_front_matter(text))
    fence = ""
    for number, line in enumerate(text.split("\n"), 1):
        opener = FENCE.match(line)
        if fence:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = ""
            continue
        if opener:
            fence = opener.group(1)
            continue
        for pattern in NOT_PROSE:
            line = pattern.sub(" ", line)
        yield number, line


def typed_numbers(text: str) -> list[tuple[int, str]]:
    """(line, text) of every hand-typed measured quantity in a page's source."""
    allowed = {n for n, line in enumerate(text.split("\n"), 1) if ALLOW.search(line)}
    return [(n, m.group(0)) for n, line in prose_lines(text) if n not in allowed
            for m in MEASURED.finditer(line)]


PAGES = sorted(DOCS.rglob("*.md"))


def test_the_rule_sees_the_chapter_pages():
    assert DOCS / "what-the-clock-caught.md" in PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_no_page_types_a_measured_number(page: Path):
    found = typed_numbers(page.read_text(encoding="utf-8"))
    where = [f"{page.relative_to(DOCS.parent)}:{line}: {text!r}" for line, text in found]
    assert not where, ("measured numbers typed by hand; use a bench:value marker "
                       "(CONTRIBUTING.md):\n" + "\n".join(where))


# --- the rule itself, on small fixtures ---------------------------------------------------

def test_a_hand_typed_step_time_is_caught_with_its_line():
    page = "# Title\n\nThe steady step took 5.9 ms on this machine.\n"
    assert typed_numbers(page) == [(3, "5.9 ms")]


@pytest.mark.parametrize("typed", [
    "5.9 ms", "130 µs", "130 μs", "2 s", "0.5s", "3 seconds", "12 GB/s", "3 TFLOP/s", "21 %", "1.5×", "10×",
    "21%", "21 percent", "11×", "11x", "a factor of 38", "3 times faster", "[11.9..13.0]",
    "1.0-1.3 s",
])
def test_each_kind_of_measured_quantity_is_caught(typed: str):
    assert typed_numbers(f"It came out at {typed} here.\n"), typed


@pytest.mark.parametrize("fine", [
    "Call it 50 times in a row.", "A 512-wide MLP with a batch of 256.", "R = 5 runs.",
    "A 4096x4096 matrix.", "A 2 x 2 grid.", "On x86 with fp16 and an H200.", "jax 0.10.2.",
    "Six steps, 3 stages.", "A ratio below 1× means faster.", "A ratio above 1x, then.", "Read it against 1×",
])
def test_parameters_and_counts_pass(fine: str):
    assert typed_numbers(fine + "\n") == []


def test_markers_code_and_markup_are_not_prose():
    page = "\n".join([
        "Took <!-- bench:value fig-x variant=a --> per call.",
        "Run `sleep 2s` first.",
        "### Heading { #fig-5-ms }",
        "See [the run](results/5ms.csv) and https://example.org/10%.",
        "```python",
        "print(f'{t * 1e3:.1f} ms')  # 5.9 ms",
        "```",
        '<span title="3 ms">text</span>',
        "<!-- a comment that says 4 ms",
        "over two lines -->",
    ])
    assert typed_numbers(page) == []


def test_a_reasoned_exception_passes_and_a_bare_one_does_not():
    ok = "Each variant gets a budget of 500 ms. <!-- typed-number: a setting, not a result -->\n"
    bare = "Each variant gets a budget of 500 ms. <!-- typed-number: -->\n"
    assert typed_numbers(ok) == []
    assert typed_numbers(bare) == [(1, "500 ms")]


def test_link_text_is_prose():
    assert typed_numbers("See [the 5 ms run](results/x.csv).\n") == [(1, "5 ms")]


def test_text_after_a_fence_inside_an_admonition_is_prose_again():
    page = "??? note\n\n    ```text\n    5 ms\n    ```\n\n    Then 6 ms.\n"
    assert typed_numbers(page) == [(7, "6 ms")]
