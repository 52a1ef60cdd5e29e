"""Where each generated page lives: its source path below ``docs/`` (what mkdocs links and
checks) and its URL path below the site root, the machine slug both use, and a link from one
page's source to another's.

Plain functions on names, importing nothing of the site: the catalog (slugs), the /bench pages
(``pages.py``) and the session pages (``history.py``) all place pages by them, so none of those
imports another to find where a page is.
"""

from __future__ import annotations

import functools
import hashlib
import posixpath
import re
from urllib.parse import urlsplit

from markupsafe import Markup

BENCH_PAGES = "bench"  # the generated pages' folder under docs/ and in the site
INDEX_SRC = f"{BENCH_PAGES}/index.md"
CHANGES_DIR = f"{BENCH_PAGES}/changes"

# The front matter of a generated page: tables of machines need the width more than the short
# nav; generated from the results, these pages stay out of the search index (the chapters carry
# the prose and the same captions).
WIDE = "---\nhide: [navigation]\nsearch: {exclude: true}\n---\n\n"

# A link inside a block that several pages show (a machine's panel is on its chapter, its figure
# page and its machine page): the block is made once, and each page's fill makes the link its own.
# A comment, like the placeholders: text or data on a page is escaped and can never spell one.
SITE_LINK = re.compile(r"<!--bench-link:([^<>\"'\s]*)-->")


def site_link(path: str) -> Markup:
    """A link to ``path`` (a site path: ``results/<machine>/<file>.csv.gz``) in a shared block;
    the build's fill (``build/buildcache.py``) turns it into a link relative to the page it lands on."""
    token = f"<!--bench-link:{path}-->"
    if not SITE_LINK.fullmatch(token):
        raise ValueError(f"{path!r} cannot be a site link")
    return Markup(token)


@functools.lru_cache(maxsize=4096)
def machine_slug(machine: str) -> str:
    """A URL- and id-safe name for a machine folder. Labels the harness writes are
    already safe and stay as they are; anything else gets a short hash so that two
    odd names cannot collide."""
    safe = re.sub(r"[^a-z0-9._-]+", "-", machine.lower()).strip("-.") or "machine"
    return safe if safe == machine else f"{safe}-{hashlib.sha256(machine.encode()).hexdigest()[:6]}"


def figure_src(fig_id: str) -> str:
    return f"{BENCH_PAGES}/{fig_id}/index.md"


def machine_src(fig_id: str, machine: str) -> str:
    return f"{BENCH_PAGES}/{fig_id}/{machine_slug(machine)}.md"


def machine_path(fig_id: str, machine: str) -> str:
    """The machine page's URL path below the site root (directory URLs)."""
    return f"{BENCH_PAGES}/{fig_id}/{machine_slug(machine)}/"


def session_src(fig_id: str, machine: str, session: str) -> str:
    return f"{BENCH_PAGES}/{fig_id}/{machine_slug(machine)}/{session}.md"


def session_path(fig_id: str, machine: str, session: str) -> str:
    """The permalink's URL path below the site root."""
    return f"{BENCH_PAGES}/{fig_id}/{machine_slug(machine)}/{session}/"


def changes_src(machine: str) -> str:
    return f"{CHANGES_DIR}/{machine_slug(machine)}.md"


def rel(src_uri: str, target_src: str) -> str:
    """A Markdown link target from the page whose source is ``src_uri`` to another source file;
    mkdocs turns it into a URL and checks that it (and its anchor) exists."""
    return posixpath.relpath(target_src, posixpath.dirname(src_uri) or ".")


# The placeholder a configured address must not carry (mkdocs.yml had "OWNER" in both addresses), and
# hosts that are no public address (`mkdocs serve` sets site_url to its own).
PLACEHOLDER = "OWNER"
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1"}


def public_base(address: str | None) -> str:
    """``address`` (mkdocs' ``site_url`` or ``repo_url``) without a trailing slash when it is a real
    public address (http or https, a host, no placeholder, not this computer), else ``""``: a
    build with no public address must not invent one."""
    address = (address or "").strip()
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.hostname or PLACEHOLDER in address:
        return ""
    return "" if parts.hostname in _LOCAL_HOSTS else address.rstrip("/")
