"""HTML from Jinja2 templates (``benchsite/templates/``) with autoescaping on.

Every value a template prints is escaped unless it is already HTML made by
another template (a :class:`markupsafe.Markup`), so text from a results file
can never become markup. Templates only lay out what the table model computed;
numbers are formatted by ``fmt`` / ``metrics`` before they get here.
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2
from markupsafe import Markup

TEMPLATES = "templates"


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("benchsite", TEMPLATES), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
                             undefined=jinja2.StrictUndefined)
    return env


def render(name: str, **context: Any) -> Markup:
    """``templates/<name>`` filled with ``context``; the result is safe HTML."""
    return Markup(environment().get_template(name).render(**context).strip())
