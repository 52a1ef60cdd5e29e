"""A session's permalink page (``bench:session``): its panel (table, spreads, verdicts, provenance)
and the block to cite it by, rendered from the session's table model (``model/sessions.py``) and
where the page is (:class:`Where`). The figure's machine page cites its latest session the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from benchsite.core import urls
from benchsite.core.urls import session_path
from benchsite.model import metrics, stats
from benchsite.model.figures import Figure
from benchsite.model.sessions import Session
from benchsite.views import fmt, quantities, render
from benchsite.views.html import render as template


@dataclass(frozen=True)
class Where:
    """What a page's links need: a site path -> URL relative to the page, the site's public address
    and the repository's (``urls.public_base`` of mkdocs' ``site_url`` and ``repo_url``, decided
    once by the page: "" where there is none, and links are then from the site root) and the
    machine's role (``Catalog.role``: "measured here" says the page is in a local build only)."""

    link: Callable[[str], str]
    site: str = ""
    repo: str = ""
    role: str = ""

    def public(self, path: str) -> str:
        """The public URL of the page at ``path`` below the site root (``session_path`` and the like):
        the site's address and the path, joined once; ``""`` when the site has no public address.
        ``make publish`` serves the site at its host's root, so the /bench section is ``<address>/bench/``."""
        return f"{self.site}/{path.lstrip('/')}" if self.site else ""


def _spreads(s: Session) -> list[dict]:
    out = []
    for spread in s.table.spreads:
        rows = [r.label for r in s.table.rows if spread.variant in r.cells]
        within = [s.within(spread.variant, label) for label in rows]
        noise = stats.noise_label(max((w for w in within if w == w), default=float("nan")))
        out.append({"variant": spread.variant, "runs": spread.runs, "between": fmt.percent_span(spread.between),
                    "within": fmt.percent_span(within), "noise": noise})
    return out


def _provenance(s: Session) -> list[tuple[str, str]]:
    frame = s.frame
    rows = []
    for col, label in render.PROVENANCE_FIELDS:
        per_run = s.per_run(col) if col in render.PER_RUN_FIELDS else None
        if per_run is not None and _distinct_count(per_run) > 1:
            rows.append((label, "by run: " + ", ".join("—" if v is None or v != v else str(v) for v in per_run)))
        else:
            rows.append((label, s.values(col)))
    rows.append(("runs × samples", f"{frame['run'].nunique()} runs, {int(frame['samples'].sum())} samples in all "
                                   "(kept as per-run summaries)"))
    return rows


def _distinct_count(values: list) -> int:
    """How many distinct values, an empty one (None) counted as one (``nunique(dropna=False)``)."""
    return len({v for v in values if v is not None}) + (None in values)


def _commits(s: Session, base: str) -> list[dict]:
    return [{"sha": c, "short": c[:12], "url": f"{base}/tree/{c}" if base and c != "unknown" else ""}
            for c in sorted({str(v) for v in s.frame["git_commit"].unique()})]


NO_ADDRESS = "<site address>"  # stands for the site's address in text to paste when none is configured


def address(at: Where, path: str) -> tuple[str, str]:
    """(href, text to paste) of the page at ``path`` below the site root: its public URL, or
    without one (a local build) a link within this site and the path after ``<site address>``."""
    url = at.public(path)
    return (url, url) if url else (at.link(path), f"{NO_ADDRESS}/{path}")


def cite(fig: Figure, s: Session, at: Where, state: str = "", download: str = "", data_url: str = "") -> dict:
    """What to paste into a review, for one session: the template's fields (``cite.html``).
    ``download``: the site's link to the latest results file, and ``data_url`` the file in the
    repository: on the machine page, at the commit that holds the latest file; on a session's own
    page, at the last commit that held that session (``Catalog.session_data_commit``), so the link
    does not change when a later session replaces the file."""
    head = s.table.headline
    first = s.frame.iloc[0]
    # A comparison's commits are of the repository benchkit compare ran in, which need not be this site's.
    commits = _commits(s, at.repo if fig.compare is None else "")
    href, url = address(at, session_path(fig.id, s.machine, s.id))
    dirty = " (with uncommitted changes)" if s.frame["git_dirty"].any() else ""
    versions = {k: s.values(f"{k}_version") for k in ("jax", "jaxlib", "numpy")}
    quoted = quantities.headline(head) if head else ""
    headline = f"{head.what}: {quoted}, median [min..max] of {head.summary.runs} runs" if head else ""
    rule = address(at, render.RULE_PATH)[1]
    verdict = (f"{head.verdict.text} (paired rule: {rule}, applied when the page was built)"
               if head and head.verdict else "")
    lines = [
        f"{fig.id}: {fig.title}",
        f"machine   {s.machine} ({first['platform']}, {first['device_kind']} x{first['device_count']})",
        f"headline  {headline}" if head else "",
        f"verdict   {verdict}" if verdict else "",
        f"jax       {versions['jax']} (jaxlib {versions['jaxlib']}, numpy {versions['numpy']})",
        f"measured  {s.date} (UTC), session {s.id}",
        f"commit    {', '.join(c['short'] for c in commits)}{dirty}",
        f"script    {fig.script_rel} sha256 {s.values('script_sha256', 12)}" + (f" ({state})" if state else "")
        if fig.compare is None else f"code      recorded by {fig.compare.made_by}: " + ", ".join(
            f"{v.variant} = {v.target} sha256 {v.sha256[:12]}" for v in fig.compare.versions),
        f"data      {data_url} ({'per-run summaries' if '/sessions/' in data_url else 'every sample'})" if data_url else
        f"data      results/{s.machine}/{fig.stem}.csv (every sample) while this is the latest session, "
        f"then results/{s.machine}/sessions/{s.id}/ (per-run summaries)",
        f"url       {url}",
        # A session a reader's own make bench measured is on no published site until its folder is merged.
        f"status    measured here by make bench, not published: this page exists in your build only, "
        f"until results/{s.machine}/ is merged and the site rebuilt"
        if at.role == "measured here" else "",
    ]
    python = s.values("python_version")
    repo = at.repo
    # A fresh clone at the commit: make bench builds .venv from that commit's requirements.txt (the
    # versions above) and writes into that clone's results/, not into the reader's own checkout.
    reproduce = "\n".join([
        f"git clone {repo or '<repository>'} rerun && cd rerun"
        + (f" && git checkout {commits[0]['sha']}" if len(commits) == 1 else ""),
        f"# the session ran Python {python}; make bench builds .venv from this commit's requirements.txt"
        if "," not in python and python != "—" else "",
        f"make bench ONLY={fig.stem} MACHINE={s.machine}"]).strip()
    if fig.compare is not None:  # in the repository it ran in, at the commit above
        reproduce = f"# in the repository it ran in, at the commit above\n{fig.compare.command}"
    short = f": {head.what} = {quoted}" + (f", {head.verdict.text}" if head.verdict else "") if head else ""
    snippet = f"[{fig.id} on {s.machine}, session {s.id}{short}]({url})"
    return {"text": "\n".join(line for line in lines if line), "url": url, "href": href,
            "public": url == href, "commits": commits, "repo": repo, "download": download, "data_url": data_url,
            "reproduce": reproduce, "markdown": snippet}


def cite_latest(fig: Figure, machine: str, s: Session | None, at: Where, state: str = "", download: str = "",
                data_url: str = "") -> dict:
    """A machine page's block to cite: its latest session's (:func:`cite`), or, for a results file
    that records no session (the first format), the machine page's own address and the script's state."""
    if s is not None:
        return cite(fig, s, at, state, download=download, data_url=data_url)
    href, url = address(at, urls.machine_path(fig.id, machine))
    text = f"{fig.id}: {fig.title}\nmachine   {machine}\nscript    {fig.script_rel} ({state})\nurl       {url}"
    return {"text": text, "url": url, "href": href, "public": url == href, "commits": [],
            "repo": at.repo, "download": download, "data_url": data_url,
            "reproduce": f"make bench ONLY={fig.stem} MACHINE={machine}",
            "markdown": f"[{fig.id} on {machine}]({url})"}


def _samples_per_cell(s: Session) -> list[int]:
    """The sample count of each run's variant at each params (the first row of each, as
    ``groupby(["run", "variant", "params"], dropna=False)["samples"].first()``)."""
    frame = s.frame
    found: dict[tuple, int] = {}
    for key in zip(frame["run"].tolist(), frame["variant"].tolist(), frame["params"].tolist(),
                   frame["samples"].tolist()):
        found.setdefault((key[0], key[1], None if pd.isna(key[2]) else key[2]), int(key[3]))
    return list(found.values())


def panel(fig: Figure, s: Session, at: Where) -> str:
    tab = s.table
    per_cell = _samples_per_cell(s)
    first = s.frame.iloc[0]
    meta = {"machine": s.machine, "platform": first["platform"], "device_kind": first["device_kind"],
            "jax": s.values("jax_version"), "date": s.date, "boundary": s.values("boundary"),
            "runs": s.frame["run"].nunique(), "samples": fmt.count_span(min(per_cell), max(per_cell), "sample"),
            # Processes per run: the kept summaries do not keep them (archive._PER_SAMPLE), and the page
            # says so rather than ask today's script (the page would then change with the script).
            "processes": None, "unmeasured": tab.unmeasured}
    metric_tables = [{"label": metrics.get(m).label, "table": render.table(tab, m)}
                     for m in fig.extra.get("metrics", ())]
    verdicts = [{"label": r.label, "text": r.verdict.text, "reason": r.verdict.reason} for r in tab.rows if r.verdict]
    # The commit the script ran at, linked where the build has a repository address.
    script = [{"short": c["short"],
               "url": f"{c['url'].replace('/tree/', '/blob/')}/{fig.script_rel}" if c["url"] else ""}
              for c in _commits(s, at.repo) if c["sha"] != "unknown"] if fig.compare is None else []
    recorded = at.link(f"{urls.BENCH_PAGES}/{fig.id}/") + "#code" if fig.compare is not None else ""
    return str(template("session.html", meta=meta, table=render.table(tab), metric_tables=metric_tables,
                        spreads=_spreads(s), ratio=fig.ratio, verdicts=verdicts, rule=at.link(render.RULE_PATH),
                        rule_title=render.RULE_TITLE, provenance=_provenance(s), script=script,
                        script_rel=fig.script_rel,
                        recorded=recorded, made_by=fig.compare.made_by if fig.compare is not None else ""))


def page(fig: Figure, s: Session, at: Where, data_url: str = "") -> str:
    """A session's page: its panel, then the block to cite it by (open), with a link to its data in the
    repository at the commit that holds it (``data_url``; none where there is no such commit)."""
    return panel(fig, s, at) + "\n" + str(template("cite.html", open=True, **cite(fig, s, at, data_url=data_url)))

