"""HTML from Jinja2 templates (``benchsite/views/templates/``) with autoescaping on.

Every value a template prints is escaped unless it is already HTML made by
another template (a :class:`markupsafe.Markup`), so text from a results file
can never become markup. Templates only lay out what the table model computed;
numbers are formatted by ``fmt`` / ``metrics`` before they get here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import jinja2
from markupsafe import Markup, escape

TEMPLATES = "templates"


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("benchsite.views", TEMPLATES), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
                             undefined=jinja2.StrictUndefined)
    return env


def render(name: str, **context: Any) -> Markup:
    """``templates/<name>`` filled with ``context``; the result is safe HTML."""
    return Markup(environment().get_template(name).render(**context).strip())


CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")  # one backtick each side, as Markdown reads it


def inline_code(text: str, esc: Callable[[str], str] = escape) -> Markup:
    """Plain text as HTML, escaped with ``esc``, with each inline `code` span (Markdown's single
    backticks) as ``<code>``: a figure's caption is written in the script as a plain string, and
    Markdown never sees it (the build puts it in raw HTML), so its backticks would show as typed."""
    parts = CODE_SPAN.split(text)  # even: plain text; odd: the inside of a code span
    return Markup("".join(f"<code>{esc(part)}</code>" if i % 2 else str(esc(part)) for i, part in enumerate(parts)))
