"""The notebook page's stylesheet pruning: the scan that hands tinycss2 only the rules that may
stay gives exactly what parsing the whole stylesheet gives (benchsite/build/notebook_page.py)."""

from __future__ import annotations

import html
import importlib.util
import random
from pathlib import Path

import pytest
import tinycss2

from benchsite.build import notebook_page

# The classes of the lesson's rendered page (mkdocs-jupyter 0.26.3, nbconvert's lab template).
LESSON_CLASSES = set("""CodeMirror admonition admonition-title anchor-link c1 clipboard-copy-icon
clipboard-copy-txt cm-s-jupyter dataframe highlight highlight-ipynb hl-python info jp-Cell
jp-Cell-inputArea jp-Cell-inputCollapser jp-Cell-inputWrapper jp-Cell-outputArea jp-Cell-outputCollapser
jp-Cell-outputWrapper jp-CodeCell jp-CodeMirrorEditor jp-Collapser jp-Editor jp-InputArea
jp-InputArea-editor jp-InputArea-prompt jp-InputCollapser jp-InputPrompt jp-MarkdownCell
jp-MarkdownOutput jp-Notebook jp-Notebook-cell jp-OutputArea jp-OutputArea-child
jp-OutputArea-executeResult jp-OutputArea-output jp-OutputArea-prompt jp-OutputCollapser jp-OutputPrompt
jp-RenderedHTML jp-RenderedHTMLCommon jp-RenderedMarkdown jp-RenderedSVG jp-RenderedText
jp-mod-noOutputs jupyter-wrapper k kc kn lesson-fold lesson-whose mf mi n nb nd ne nf nn notice o ow p
s1 s2 sa sd si w zeroclipboard-container""".split())


def _parsed(css: str, classes: set[str], page_vars=frozenset(), rules=None) -> str:
    """``prune_css`` as it was: tinycss2 parses the whole stylesheet (``rules``, if given)."""
    if rules is None:
        rules = tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True)
    kept = notebook_page._prune_rules(rules, classes)
    used, defs = notebook_page._uses(kept)
    return notebook_page._serialize(kept, notebook_page._closure(used | set(page_vars), defs))


def _same(css: str, classes: set[str], page_vars=frozenset(), rules=None) -> None:
    assert notebook_page.prune_css(css, classes, page_vars) == _parsed(css, classes, page_vars, rules), css


def _jupyter_css() -> list[str]:
    """The two stylesheets mkdocs-jupyter inlines into a notebook page (the light theme)."""
    spec = importlib.util.find_spec("mkdocs_jupyter")  # found, not imported (nbconvert stays out)
    assets = Path(spec.origin).parent / "templates" / "mkdocs_html" / "assets"
    return [(assets / name).read_text(encoding="utf-8") for name in ("index.css", "theme-light.css")]


def test_the_real_stylesheets_prune_the_same_by_the_scan():
    sheets = _jupyter_css()
    assert sum(map(len, sheets)) > 500_000  # the stylesheet the scan is for
    rng = random.Random(38)
    for css in sheets:
        notebook_page._prune_scanned(css, LESSON_CLASSES)  # the scan is sure of these: no fallback
        rules = tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True)
        named = sorted({c for c in notebook_page.SELECTOR_CLASS.findall(css)})
        for classes in (LESSON_CLASSES, set(), set(rng.sample(named, len(named) // 5))):
            _same(css, classes, {"--jp-mirror-editor-keyword-color"}, rules)
    assert len(notebook_page.prune_css(sheets[0], LESSON_CLASSES)) < len(sheets[0]) / 10


TRICKY = [
    ".a{color:red}",
    "/* .a{ } ; */ .a{color:red} /* unterminated { ",
    '.a::before{content:"}"} .b{content:\'{;\'} .a{x:1} .b{content:\'}\'} .a{y:2}',
    '.a{content:"bad\n} .a{color:red}',  # a bad string ends at the newline
    '.a{content:"unterminated',
    ".a{background:url(data:image/svg+xml;base64,PHN2Zz4=)} .zz{background:url(a;b)}",
    '.a{background:url( "x{" )} .zz{background:URL(y)}',
    ".a{background:xurl(a;b)} .zz{background:-url(a)}",
    ".a{background:url(a{b)}",  # an unquoted url( the scan does not step over: all to tinycss2
    ".a{background:url(  a b )} .a{color:red}",  # a bad url ends at its ")"
    ".a{b:url(",  # url to the end
    '@charset "UTF-8"; .a{color:red}',
    "@import url(x.css); @import 'y.css'; .zz{}",
    "@media (max-width: 10px) { .a{color:red} .zz{color:blue} } .a{margin:0}",
    "@media print{.zz{x:1}} @supports (display:grid){.a{display:grid}.zz{y:2}}",
    "@font-face{font-family:x;src:url(data:font/woff2;base64,AAAA)} @keyframes spin{from{a:b}to{c:d}}",
    "@-webkit-keyframes x{0%{a:b}} @--odd; @ .a{color:red}; @; .a{x:y}",
    "a; .a{color:red} .zz; .b{c:d}",  # a top-level ; is part of a qualified rule's selectors
    ") .a{x:1} ] .a, .zz{y:2} } .a{z:3}",  # unmatched closers belong to the rule
    ".a:not(.zz, .yy){x:1} .zz:not(.a){y:2} .a:is(.zz, .a){z:3}",
    '.a[data-x="a,.zz"], .zz{x:1} [title=a.zz]{y:2} [title=a.a]{z:3}',
    ".a:nth-child(2n+1){x:1} .a:nth-last-child(n+4){y:2} .a .b1e{z:3} .a:nth-child(1e){w:4}",
    ".U+a{x:1} .u+zz{y:2} .a u+a{z:3} .u+a{w:4} .u{v:5}",  # unicode-range tokens (written .U+A)
    ".é{x:1} .a.é{y:2} .a{z:3}",
    ",.a,{x:1} , {y:2} {z:3} .zz,,{w:4}",
    ".a{color:red",  # a block the end cuts short
    ".a:not(.b{color:red}",
    "@media x{.a{color:red}",
    ".a\\:b{x:1} .a{y:2}",  # a backslash: all to tinycss2
    "<!-- .a{x:1} --> .a{y:2}",
    ".a{x:1}\r\n.a{y:2}\f.zz{z:3}\0.a{w:4}",
    ".a{--v:1px;--w:var(--v);--u:2px;padding:var(--w) !important;margin:var( --n )}",
    ".a{--jp-x:{a:b};color:red}",
    "#a.a{x:1} .a#zz{y:2} .a > .zz ~ .a + .a{z:3} .a||.b{w:4} .a|a{v:5} .a *=b{u:6}",
    ".a[x^=y],.a[x$=y],.a[x*=y],.a[x|=y],.a[x~=y]{z:1}",
    ".a (.zz, .a) {x:1} .a [.zz, .a]{y:2} .a(.zz]{z:3}",
    ".a(.zz], .a){w:4} .a[.zz), .a]{v:5} .a{u:6}",  # a closer that is not its block's
    "",
    "   ",
    "/* only a comment */",
]


@pytest.mark.parametrize("css", TRICKY)
def test_tricky_stylesheets_prune_the_same_by_the_scan(css):
    for classes in ({"a"}, {"a", "zz"}, {"a", "b", "yy", "é", "b1e", "u"}, {"a", "U"}, set()):
        _same(css, classes, {"--n"})


def test_random_stylesheets_prune_the_same_by_the_scan():
    """Stylesheets made of pieces that can hide or end a rule, put together at random (what makes
    the scan step aside is left to the cases above, so that most of these are scanned)."""
    pieces = [" ", "\n", ".a", ".zz", ".b", ",", ";", "{", "}", "(", ")", "[", "]", ":not(", "/*", "*/",
              '"', "'", '"x"', "url(", "url(x)", "URL( y )", "@media", "@x", "@", "x:y", "--v:1", "var(--v)",
              "2n+1", "u+a", "é", "#", ">", "!important", "e", "-", "0", "\r", "\0"]
    rng = random.Random(3)
    scanned = 0
    for _ in range(3000):
        css = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
        try:
            notebook_page._prune_scanned(css, {"a"})
            scanned += 1
        except notebook_page._Unsure:
            pass
        for classes in ({"a"}, {"a", "zz", "b"}):
            _same(css, classes, {"--v"})
    assert scanned > 2000


def test_the_scan_steps_over_what_it_knows():
    for css in ('.a{background:url(  "x{" )}', ".a{background:url(data:image/svg+xml;base64,PHN2Zz4=)}",
                '.a::before{content:"}"}', "/* } */ .a{x:1}", ".a{x:1} .zz{y:2"):
        notebook_page._prune_scanned(css, {"a"})


def test_the_scan_steps_aside_where_it_cannot_be_sure():
    for css in (".a\\:b{x:1}", "<!-- .a{x:1}", ".a{background:url(a{b)}", ".a{b:url("):
        with pytest.raises(notebook_page._Unsure):
            notebook_page._prune_scanned(css, {"a"})


# --- Alternative text of the SVG outputs (notebook_page.describe_images) ---

def _img(svg: str, alt: str = notebook_page.NO_ALT) -> str:
    """An SVG output as nbconvert writes it into the page (its lab template, then its alt filler)."""
    import base64
    data = base64.b64encode(svg.encode()).decode()
    return (f'<div class="jp-RenderedSVG jp-OutputArea-output" data-mime-type="image/svg+xml" tabindex="0">\n'
            f'<img alt="{alt}" src="data:image/svg+xml;base64,{data}"/>\n</div>')


SVG = 'xmlns="http://www.w3.org/2000/svg"'
# Matplotlib's SVG (3.11, svg.fonttype "none"), cut to its structure: a title in its metadata (its
# own name, not the figure's), per panel its axes (tick labels, then the label; a y label turned a
# quarter turn), its title and its legend.
MATPLOTLIB = f"""<svg xmlns:xlink="http://www.w3.org/1999/xlink" {SVG} width="648pt" height="259.2pt">
 <metadata><rdf:RDF xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:cc="http://creativecommons.org/ns#"
   xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><cc:Work><dc:creator><cc:Agent>
   <dc:title>Matplotlib v3.11.2, https://matplotlib.org/</dc:title></cc:Agent></dc:creator></cc:Work></rdf:RDF>
 </metadata>
 <g id="figure_1"><g id="axes_1">
  <g id="matplotlib.axis_1"><g id="xtick_1"><g id="text_1"><text transform="rotate(-0 1 1)">1</text></g></g>
   <g id="text_6"><text transform="rotate(-0 1 1)">fresh function (one first call each)</text></g></g>
  <g id="matplotlib.axis_2"><g id="ytick_1"><g id="text_7"><text transform="rotate(-0 1 1)">0</text></g></g>
   <g id="text_13"><text transform="rotate(-90 18.6 121.6)">ms</text></g></g>
  <g id="text_14"><text transform="rotate(-0 1 1)">first call, by stage</text></g>
  <g id="legend_1"><g id="text_15"><text>trace</text></g></g></g>
 <g id="axes_2">
  <g id="matplotlib.axis_3"><g id="text_25"><text transform="rotate(0)">warm sample, in the order taken</text></g></g>
  <g id="matplotlib.axis_4"><g id="text_34"><text transform="rotate(-90 1 1)">ms</text></g></g>
  <g id="text_35"><text transform="rotate(-0 1 1)">warm calls, ready minus start</text></g></g></g>
</svg>"""


@pytest.mark.parametrize(("svg", "alt"), [
    # the lesson's interval diagram (docs/lessons/interval_diagram.py): its aria-label, before its title
    (f'<svg {SVG} role="img" aria-label="Timelines of host and device work"><title>The interval</title></svg>',
     "Timelines of host and device work"),
    (f"<svg {SVG}><title>The interval  each\n timing measures</title><text>x</text></svg>",
     "The interval each timing measures"),
    (MATPLOTLIB, "Chart in 2 panels. “first call, by stage”: ms against fresh function (one first call each). "
                 "“warm calls, ready minus start”: ms against warm sample, in the order taken."),
    (f'<svg {SVG} aria-label="a &lt;b&gt; &quot;c&quot; &amp; d"/>', "a <b> \"c\" & d"),
])
def test_an_svg_output_gets_the_alt_text_it_carries(svg, alt):
    out = notebook_page.describe_images(_img(svg))
    assert notebook_page.NO_ALT not in out
    assert f'alt="{html.escape(alt, quote=True)}"' in out
    assert out.replace(f'alt="{html.escape(alt, quote=True)}"', f'alt="{notebook_page.NO_ALT}"') == _img(svg)


@pytest.mark.parametrize("page", [
    _img(f"<svg {SVG}><rect/></svg>"),  # says nothing: nbconvert's placeholder stays
    _img("<svg><title>not the SVG namespace</title></svg>"),
    _img("<svg unclosed"),
    _img(f'<svg {SVG} aria-label="own"/>', alt="The author's own text"),  # an alt of its own is kept
    '<img alt="No description has been provided for this image" src="data:image/png;base64,iVBORw0KGgo="/>',
    '<img alt="No description has been provided for this image" src="data:image/svg+xml;base64,@@@"/>',
])
def test_an_image_that_says_nothing_or_has_its_own_alt_is_left_as_it_is(page):
    assert notebook_page.describe_images(page) == page
