"""Sessions on the /bench pages: the permalink of each session, the history of a figure on
a machine, and what changed on a machine between its last two sessions.

URLs (a session's page is made from that session's per-run summaries alone, the same bytes whether the
session is the latest or kept, so adding sessions or machines never changes it; a change to the
rendering or to the verdict rule does, since verdicts are computed at build time):
  /bench/<fig-id>/<machine>/<session>/   one session of one figure on one machine
  /bench/changes/<machine>/              the cells that moved between the last two sessions

Data comes from ``sessions.py`` (computed once per build); verdicts between sessions
are the unpaired rule's (``model/cells.py``: runs of two sessions are not paired). A figure's history
block is the model's (``model/pagefacts.py``) rendered by ``views/history_chart.py``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from benchsite.core import urls
from benchsite.core.urls import session_path
from benchsite.model.cells import of_sessions
from benchsite.model.figures import Figure
from benchsite.model.sessions import Session, env_diff, history
from benchsite.views import fmt, history_chart, render
from benchsite.views import session as session_view
from benchsite.views.html import render as template

if TYPE_CHECKING:
    from benchsite.pages.markers import Context


# --- paths ---------------------------------------------------------------------------------

def session_ids(cat, fig: Figure, machine: str) -> list[str]:
    """``history(...).ids``, kept under the build cache by the results file and the kept sessions'
    files: listing a machine's session pages reads no session."""
    from benchsite.core.cachefile import file_digest

    kept = cat.kept(machine, fig.stem)
    state = "-" if machine not in cat.machines(fig.id) else cat.problem(fig.id, machine) or cat.csv_digest(
        fig.id, machine)
    files = [(sid, str(p), file_digest(p, cat.cache) if p.is_file() else "-")
             for sid, pair in sorted(kept.items()) for p in pair]
    return cat.stored("session-ids", (repr(fig), machine, state, files), lambda: history(cat, fig.id, machine).ids)


# --- between two sessions ------------------------------------------------------------------

def step(cat, old: Session, new: Session, link) -> dict:
    """One step of the history (``history_chart.step``): the verdict on every cell and what changed
    around it (kept between builds by the two sessions' digests and where the page links from)."""
    links = [link(session_path(s.fig_id, s.machine, s.id)) for s in (old, new)] + [link(render.RULE_PATH)]
    return cat.stored("step", (old.digest, new.digest, *links),
                      lambda: history_chart.step_shown(old, new, of_sessions(cat, old, new), env_diff(old, new), link))


# --- a session's page (views/session.py renders it) ------------------------------------------

def where(ctx: Context, machine: str) -> session_view.Where:
    """What a session's page needs of the page it is on: its links, the site's and the
    repository's public addresses, the machine's role."""
    return session_view.Where(ctx.link, urls.public_base(ctx.site_url), urls.public_base(ctx.repo_url),
                              ctx.catalog.role(machine))


def session_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:session fig-id machine=<slug> session=<id> -->``: one session's permalink page."""
    cat = ctx.catalog
    if not args or args[0] not in cat.figures:
        raise ValueError("the first argument must be the id of a figure script")
    fig = cat.figures[args[0]]
    opts = dict(a.split("=", 1) for a in args[1:] if "=" in a)
    by_slug = cat.by_slug(fig.id)
    if opts.get("machine") not in by_slug:
        raise ValueError(f"no results for {fig.id} on {opts.get('machine')}")
    machine = by_slug[opts["machine"]]
    at = where(ctx, machine)
    hist = history(cat, fig.id, machine)
    sid = opts.get("session", "")
    intro = (f"One session of `{fig.id}` on {fmt.md(machine)}. What this address shows cannot change: that "
             "session's samples, kept as its per-run summaries, which later sessions and machines leave alone. "
             "What can change is how they are shown and judged: the page is rebuilt with the site, so a "
             "correction to its rendering shows here, and its verdicts are computed at each build by the rule of "
             f"[How a verdict is decided]({urls.rel(ctx.src_uri, 'verdicts.md')}), so a change to that rule "
             "(`benchsite/model/stats.py`) can change a verdict here; the cite block names the rule it was judged by. "
             f"[The latest results on this machine]({urls.rel(ctx.src_uri, urls.machine_src(fig.id, machine))}) · "
             f"[every machine]({urls.rel(ctx.src_uri, urls.figure_src(fig.id))}).\n")
    if sid in hist.errors:
        ctx.on_problem(hist.errors[sid])
        return intro + ctx.cache.html_block(render.error_box(fig.id, hist.errors[sid]))
    s = next((x for x in hist.sessions if x.id == sid), None)
    if s is None:
        raise ValueError(f"no session {sid} of {fig.id} on {machine}")
    # The page, kept with the build's finished HTML by what it is made from (the session's digest)
    # and where it links from.
    # Its data in the repository at the commit that holds it (issue 38: linked, not copied into the site).
    committed = cat.session_data_commit(fig.id, machine, sid) if at.repo else None
    data_url = f"{at.repo}/blob/{committed[1]}/{committed[0]}" if committed else ""
    key = "\0".join((s.digest, ctx.src_uri, ctx.site_url, ctx.repo_url, ctx.link("x/"), at.role, data_url))
    return intro + ctx.cache.html_block(ctx.cache.block("session-page", key,
                                                        lambda: session_view.page(fig, s, at, data_url)))


# --- what changed on a machine -------------------------------------------------------------

def _pair(sessions: tuple, from_jax: str | None, to_jax: str | None,
          from_session: str | None = None, to_session: str | None = None) -> tuple | None:
    """The two sessions to compare: the last two; or, given jax versions, the last session measured
    with ``from_jax`` and the first with ``to_jax`` (what an upgrade moved, even when later sessions
    of the newer jax followed for other reasons); or two sessions by id. None when there are not
    two such sessions."""
    if from_session or to_session:
        if not (from_session and to_session):
            raise ValueError("from_session= and to_session= go together")
        old = [x for x in sessions if x.id == from_session]
        new = [x for x in sessions if x.id == to_session]
        return (old[0], new[0]) if old and new else None
    if not (from_jax or to_jax):
        return (sessions[-2], sessions[-1]) if len(sessions) >= 2 else None
    if not (from_jax and to_jax):
        raise ValueError("from_jax= and to_jax= go together")
    old = [x for x in sessions if x.values("jax_version") == from_jax]
    new = [x for x in sessions if x.values("jax_version") == to_jax]
    return (old[-1], new[0]) if old and new else None


def changes_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:changes machine=<slug> [from_jax=A to_jax=B] -->``: every figure's cells that
    moved (unpaired rule) between its last two sessions on the machine (or between its last session
    with jax A and its first with jax B), with what changed in the provenance."""
    cat = ctx.catalog
    opts = dict(a.split("=", 1) for a in args if "=" in a)
    by_slug = cat.by_slug()
    if opts.get("machine") not in by_slug:
        # A page about one machine's sessions, built from a results folder without that machine (a
        # reader's own folder, a test's): said on the page, not a broken build.
        return (f"\n!!! note \"No results on {fmt.md(opts.get('machine', ''))} here\"\n"
                f"    The results folder this site was built from holds no results on that machine, so "
                f"there is nothing to compare on it.\n")
    machine = by_slug[opts["machine"]]
    figures, single, errors = [], [], []
    # Several lists on one page (the upgrade page) need their own anchors: the pair they compare.
    pair_opts = [opts[k] for k in ("from_jax", "to_jax", "from_session", "to_session") if opts.get(k)]
    tag = ("--" + "-".join(re.sub(r"[^a-z0-9]+", "-", v.lower()).strip("-") for v in pair_opts)) if pair_opts else ""
    for fig_id, fig in sorted(cat.figures.items()):
        if machine not in cat.machines(fig_id):
            continue
        hist = history(cat, fig_id, machine)
        errors += [render.error_box(fig_id, m) for m in hist.errors.values()]
        for message in hist.errors.values():
            ctx.on_problem(message)
        pair = _pair(hist.sessions, opts.get("from_jax"), opts.get("to_jax"),
                     opts.get("from_session"), opts.get("to_session"))
        if pair is None:
            single.append({"id": fig_id, "href": ctx.link(urls.machine_path(fig_id, machine))})
            continue
        found = step(cat, *pair, ctx.link)
        figures.append({"id": fig_id, "anchor": fig_id + tag, "title": fig.title,
                        "href": ctx.link(urls.machine_path(fig_id, machine)),
                        **found})
    between = (f"its last session with jax {fmt.md(opts['from_jax'])} and its first with jax "
               f"{fmt.md(opts['to_jax'])}" if opts.get("from_jax") else
               f"sessions {fmt.md(opts['from_session'])} and {fmt.md(opts['to_session'])}"
               if opts.get("from_session") else "its last two sessions")
    intro = (f"For every figure measured on {fmt.md(machine)} in at least two sessions: the cells of its "
             f"table whose difference between {between} is **a result** by the unpaired rule "
             f"([How a verdict is decided]({urls.rel(ctx.src_uri, 'verdicts.md')}); runs of two sessions are not "
             "paired), with what changed in the provenance between them. Each figure's page on this machine "
             "has its whole history.\n")
    return intro + ctx.cache.html_block(str(template("changes.html", machine=machine, figures=figures,
                                                 single=single, errors=errors, single_note=(
        "Not in both sessions" if opts.get("from_jax") or opts.get("from_session") else ""))))
