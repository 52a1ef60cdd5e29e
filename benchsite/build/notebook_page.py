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
"""

from __future__ import annotations

import re

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
    kept = _prune_rules(tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True), classes)
    used, defs = _uses(kept)
    return _serialize(kept, _closure(used | set(page_vars), defs))


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
