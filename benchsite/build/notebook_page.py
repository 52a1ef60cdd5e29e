"""Lighten a notebook page as mkdocs-jupyter renders it, without touching its stored outputs.

mkdocs-jupyter (0.26) inlines all of JupyterLab's CSS (about 575 KB: Blueprint widgets, menus,
file browser, hundreds of colour variables) into the page, with no option to leave it out. A
rendered notebook uses a few dozen of those classes. :func:`prune_page` keeps the rules whose
selectors name only classes that occur in the page, then the custom properties those rules
(or the page) use, transitively. Nothing in the notebook's stored outputs changes; the page is
static, so no class appears later (there is no JupyterLab running to add one).

Two more pieces are dropped: the Mermaid loader script when the page has no Mermaid diagram,
and a second copy of the Pygments stylesheet that mkdocs-jupyter writes as a Python list's repr
(``['pre { ...']``), which browsers half-ignore anyway.

Parsing the whole stylesheet with tinycss2 took most of the pruning's time, though about 96 % of
its rules are dropped. So :func:`prune_css` first cuts the stylesheet into its top-level rules
with a scan that knows only what can hide a brace or a semicolon (comments, strings, ``url(…)``),
reads each rule's selectors from its text, and hands tinycss2 only the rules that stay (and any
at-rule). Every rule tinycss2 is handed is parsed as it was inside the whole stylesheet, so the
result is the same text, byte for byte; where the scan could not be sure of that (a backslash, an
unquoted ``url(`` it cannot step over, ``<!--``), the whole stylesheet goes to tinycss2 as before
(``tests/test_notebook_page.py`` holds the two equal).

:func:`describe_images` gives each SVG output its own alternative text: nbconvert shows an SVG as
an ``<img>`` of a ``data:`` URL and, finding no ``alt``, writes "No description has been provided
for this image", though the SVG may say what it is (its ``aria-label`` or ``<title>``). A
Matplotlib chart says neither, so its text is made of what it labels: each panel's title and axis
labels.
"""

from __future__ import annotations

import base64
import binascii
import html as htmllib
import re
import xml.etree.ElementTree as ET

import tinycss2

MERMAID_LOADER = re.compile(r'<script type="module">(?:(?!</script>).)*?\.jp-Mermaid(?:(?!</script>).)*</script>', re.S)
LIST_REPR_STYLE = re.compile(r"<style[^>]*>\s*\['(?:(?!</style>).)*</style>", re.S)
STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.S)
CLASS_ATTR = re.compile(r"""class\s*=\s*(?:"([^"]*)"|'([^']*)')""")
SELECTOR_CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
VAR_USE = re.compile(r"var\(\s*(--[\w-]+)")


def page_classes(html: str) -> set[str]:
    return {c for m in CLASS_ATTR.finditer(html) for c in (m.group(1) or m.group(2) or "").split()}


def _split_selectors(prelude: list) -> list[str]:
    """A rule's selector list split at its top-level commas (a comma inside ``:not(a, b)`` stays)."""
    out, current = [], []
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            out.append(tinycss2.serialize(current).strip())
            current = []
        else:
            current.append(token)
    out.append(tinycss2.serialize(current).strip())
    return [s for s in out if s]


NEGATION = re.compile(r":not\([^()]*\)")


def _keep_selector(selector: str, classes: set[str]) -> bool:
    """Every class the selector requires is in the page (a class under ``:not()`` is not required:
    ``.jp-Cell:not(.jp-mod-active)`` matches every cell of a static page)."""
    return all(c in classes for c in SELECTOR_CLASS.findall(NEGATION.sub("", selector)))


def _prune_rules(rules: list, classes: set[str]) -> list[tuple[str, list | None, object]]:
    """(selector text or at-rule head, declarations or None, nested result or raw rule)."""
    kept = []
    for rule in rules:
        if rule.type == "qualified-rule":
            selectors = [s for s in _split_selectors(rule.prelude) if _keep_selector(s, classes)]
            if selectors:
                decls = [d for d in tinycss2.parse_declaration_list(rule.content, skip_whitespace=True,
                                                                    skip_comments=True) if d.type == "declaration"]
                kept.append((",".join(selectors), decls, None))
        elif rule.type == "at-rule" and rule.lower_at_keyword in ("media", "supports") and rule.content:
            inner = _prune_rules(tinycss2.parse_rule_list(rule.content, skip_whitespace=True, skip_comments=True),
                                 classes)
            if inner:
                kept.append((f"@{rule.at_keyword} {tinycss2.serialize(rule.prelude).strip()}", None, inner))
        elif rule.type == "at-rule" and rule.lower_at_keyword != "charset":
            kept.append(("", None, rule))  # keyframes, font-face: small, kept whole
    return kept


def _uses(kept: list) -> tuple[set[str], dict[str, set[str]]]:
    """Variables used by ordinary declarations, and what each custom property's value uses."""
    used, defs = set(), {}
    for _, decls, inner in kept:
        if decls is not None:
            for d in decls:
                refs = set(VAR_USE.findall(tinycss2.serialize(d.value)))
                if d.name.startswith("--"):
                    defs.setdefault(d.name, set()).update(refs)
                else:
                    used |= refs
        elif isinstance(inner, list):
            u, nd = _uses(inner)
            used |= u
            for k, v in nd.items():
                defs.setdefault(k, set()).update(v)
        elif inner is not None:
            used |= set(VAR_USE.findall(inner.serialize()))
    return used, defs


def _closure(used: set[str], defs: dict[str, set[str]]) -> set[str]:
    todo, seen = list(used), set(used)
    while todo:
        for ref in defs.get(todo.pop(), ()):
            if ref not in seen:
                seen.add(ref)
                todo.append(ref)
    return seen


def _serialize(kept: list, needed: set[str]) -> str:
    parts = []
    for head, decls, inner in kept:
        if decls is not None:
            body = ";".join(f"{d.name}:{tinycss2.serialize(d.value).strip()}{'!important' if d.important else ''}"
                            for d in decls if not d.name.startswith("--") or d.name in needed)
            if body:
                parts.append(f"{head}{{{body}}}")
        elif isinstance(inner, list):
            body = _serialize(inner, needed)
            if body:
                parts.append(f"{head}{{{body}}}")
        else:
            parts.append(inner.serialize())
    return "".join(parts)


def prune_css(css: str, classes: set[str], page_vars: set[str] = frozenset()) -> str:
    try:
        kept = _prune_scanned(css, classes)
    except _Unsure:
        kept = _prune_parsed(css, classes)
    used, defs = _uses(kept)
    return _serialize(kept, _closure(used | set(page_vars), defs))


def _prune_parsed(css: str, classes: set[str]) -> list:
    """The rules of ``css`` that stay, the whole stylesheet parsed by tinycss2."""
    return _prune_rules(tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True), classes)


class _Unsure(Exception):
    """The scan cannot be sure where a rule ends: tinycss2 reads the whole stylesheet."""


# What can hide a brace, bracket, parenthesis or semicolon from a scan, then those characters.
# A string ends at its quote, or before a newline (a bad string), or at the end; the stylesheet
# has no backslash, so no escape. An unquoted url() is passed over whole when it holds none of
# "'()\{}[]* (then it ends at its ")" whether tinycss2 reads it as a url or as a function, as it
# does after "xurl"); any other "url(" not followed by a quote is a case the scan does not try.
_SCAN = re.compile(r"""/\*.*?(?:\*/|\Z)|"[^"\n]*"?|'[^'\n]*'?|(?i:url)\((?:[^"'()\\{}\[\]*]*\)|[ \n\t]*+(?!["']))"""
                   r"|[{}()\[\];]", re.S)
_SKIP = re.compile(r"(?:[ \n\t]+|/\*.*?(?:\*/|\Z))*", re.S)  # what tinycss2 skips before a rule
_AT_KEYWORD = re.compile(r"@(?:-?[A-Za-z_\x80-\U0010ffff]|--)")
_OPENS = {"{": "}", "[": "]", "(": ")"}
_CLOSES = frozenset("}])")
# A selector list that tinycss2 serializes as its own text but for a "/**/" put between two of its
# tokens or a unit's "e" written as "\65 " (neither makes or breaks a ".class" or a ":not(…)"), so
# that its classes can be read from the text: ASCII names and delimiters, no string, comment,
# escape or "u+" (a unicode-range token).
_PLAIN_SELECTORS = re.compile(r"(?:(?![uU]\+)[\w\-.#:>+~*\[\]=() \t\n,^$|])*", re.A)


def _prune_scanned(css: str, classes: set[str]) -> list:
    """What ``_prune_parsed`` gives, from tinycss2 parsing only the rules that may stay.

    tinycss2 reads its text the same way wherever it starts, after a rule or at the start (it
    replaces NUL, CR and FF first; so does this). The scan follows tinycss2's blocks: an opening
    ``{``, ``[`` or ``(`` (a function's too) is closed only by its own closer, and any other closer
    is a token like another; a top-level ``{}`` block ends a rule; a top-level ``;`` ends an
    at-rule. A qualified rule whose selectors all need a class the page lacks is left out
    unparsed; every other rule is parsed from its own text."""
    css = css.replace("\0", "\uFFFD").replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    if "\\" in css or "<!--" in css or "-->" in css:
        raise _Unsure
    kept: list = []
    start = _SKIP.match(css).end()  # where the rule being scanned starts
    at_rule = _AT_KEYWORD.match(css, start) is not None
    block = -1  # where its top-level {} block opens
    stack: list[str] = []  # the closers of the blocks open here
    for match in _SCAN.finditer(css, start):
        token = match.group()
        if token in _OPENS:
            if not stack and token == "{":
                block = match.start()
            stack.append(_OPENS[token])
            continue
        if token in _CLOSES:
            if not stack or stack[-1] != token:
                continue  # an unmatched closer: a token of the rule, as in tinycss2
            stack.pop()
            if stack or token != "}":
                continue
        elif token == ";":
            if stack or not at_rule:
                continue  # inside a block, or in a qualified rule's selectors
        elif token[0] in "/\"'" or token[-1] == ")":
            continue  # a comment, a string, a url(…)
        else:
            raise _Unsure  # an unquoted url( the scan does not step over
        end = match.end()
        if at_rule or _may_stay(css[start:block], classes):
            kept += _prune_parsed(css[start:end], classes)
        start = _SKIP.match(css, end).end()
        at_rule, block = _AT_KEYWORD.match(css, start) is not None, -1
    if start < len(css):  # a rule the end of the stylesheet cut short
        kept += _prune_parsed(css[start:], classes)
    return kept


def _may_stay(prelude: str, classes: set[str]) -> bool:
    """False only where ``_prune_rules`` drops a qualified rule of these selectors (it decides
    again on every rule this lets through)."""
    if not _PLAIN_SELECTORS.fullmatch(prelude):
        tokens = tinycss2.parse_component_value_list(prelude, skip_comments=True)
        return any(_keep_selector(s, classes) for s in _split_selectors(tokens))
    if "(" in prelude or "[" in prelude:
        parts, last, stack = [], 0, []
        for i, c in enumerate(prelude):  # the commas outside blocks (the scan's rule of closers)
            if c in _OPENS:
                stack.append(_OPENS[c])
            elif c in _CLOSES:
                if stack and stack[-1] == c:
                    stack.pop()
            elif c == "," and not stack:
                parts.append(prelude[last:i])
                last = i + 1
        parts.append(prelude[last:])
    else:
        parts = prelude.split(",")
    return any(_keep_selector(part, classes) for part in parts if part.strip())


def prune_page(html: str, marker: str = ".jupyter-wrapper") -> str:
    """``html`` with every inline stylesheet that styles ``marker`` pruned to what the page uses,
    without the unused Mermaid loader and the list-repr stylesheet."""
    html = LIST_REPR_STYLE.sub("", html)
    if 'class="jp-Mermaid' not in html:
        html = MERMAID_LOADER.sub("", html)
    classes = page_classes(html)
    # Variables used anywhere but in the stylesheets being pruned: inline styles, and the
    # Pygments stylesheet, which colours code with JupyterLab's --jp-mirror-editor-* variables.
    outside = STYLE.sub(lambda m: "" if marker in m.group(2) else m.group(0), html)
    page_vars = set(VAR_USE.findall(outside))
    return STYLE.sub(lambda m: m.group(1) + prune_css(m.group(2), classes, page_vars) + m.group(3)
                     if marker in m.group(2) else m.group(0), html)


NO_ALT = "No description has been provided for this image"  # nbconvert's (exporters/html.py)
SVG_IMG = re.compile(r"<img\b[^>]*>")
SVG_DATA = re.compile(r'\ssrc="data:image/svg\+xml;base64,([A-Za-z0-9+/=\s]+)"')
SVG_NS = "{http://www.w3.org/2000/svg}"


def _texts(group) -> list[str]:
    """The text of each ``<g id="text_N">`` directly in ``group`` (Matplotlib's text artists)."""
    return [" ".join("".join(g.itertext()).split()) for g in group
            if g.tag == f"{SVG_NS}g" and g.get("id", "").startswith("text_")]


def _panel(axes) -> str:
    """One Matplotlib panel: its title, then its y label against its x label (a y label is drawn
    turned a quarter turn)."""
    title = " ".join(t for t in _texts(axes) if t)
    x_label = y_label = ""
    for axis in axes:
        if axis.tag == f"{SVG_NS}g" and axis.get("id", "").startswith("matplotlib.axis_"):
            for g in axis:
                if g.tag == f"{SVG_NS}g" and g.get("id", "").startswith("text_"):
                    text = " ".join("".join(g.itertext()).split())
                    turned = any("rotate(-90" in (t.get("transform") or "") for t in g.iter(f"{SVG_NS}text"))
                    if text and turned:
                        y_label = text
                    elif text:
                        x_label = text
    axes_text = f"{y_label} against {x_label}" if x_label and y_label else x_label or y_label
    return f"“{title}”: {axes_text}" if title and axes_text else f"“{title}”" if title else axes_text


def svg_description(svg: str) -> str | None:
    """What an SVG says it shows: its root's ``aria-label``, else its root's ``<title>``, else,
    for a Matplotlib figure, its panels (title and axis labels); None when it says nothing."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError:
        return None
    if root.tag != f"{SVG_NS}svg":
        return None
    label = " ".join((root.get("aria-label") or "").split())
    if label:
        return label
    for child in root:
        if child.tag == f"{SVG_NS}title":
            title = " ".join("".join(child.itertext()).split())
            if title:
                return title
    panels = [p for p in (_panel(axes) for axes in root.iter(f"{SVG_NS}g")
                          if axes.get("id", "").startswith("axes_")) if p]
    if not panels:
        return None
    return f"Chart in {len(panels)} panels. " + ". ".join(panels) + "." if len(panels) > 1 \
        else f"Chart. {panels[0]}."


def describe_images(page: str) -> str:
    """``page`` with nbconvert's placeholder ``alt`` of each SVG ``<img>`` replaced by what the SVG
    says it shows (:func:`svg_description`); an image that says nothing keeps the placeholder."""
    def describe(match: re.Match) -> str:
        tag = match.group(0)
        data = SVG_DATA.search(tag)
        if f'alt="{NO_ALT}"' not in tag or not data:
            return tag
        try:
            svg = base64.b64decode("".join(data.group(1).split()), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return tag
        text = svg_description(svg)
        if not text:
            return tag
        return tag.replace(f'alt="{NO_ALT}"', f'alt="{htmllib.escape(text, quote=True)}"', 1)

    return SVG_IMG.sub(describe, page)
