"""The written /bench pages are warmed a machine at a time (``plugin.on_nav``): every page of one
machine (its changes page, each figure's page on it and its sessions' pages) gets that machine's
group, so they run in one worker, one after another (``parallel.Job.group``); another machine's
pages get another group."""

from benchsite.build import plugin
from benchsite.core import urls


def test_every_written_page_of_a_machine_is_in_its_machines_group():
    for machine in ("cpu-intel-xeon-f6m207-2c", "gpu-nvidia-h100", "synthetic-007"):
        pages = [urls.changes_src(machine), urls.machine_src("fig-dtype-cost", machine),
                 urls.session_src("fig-dtype-cost", machine, "20261201T104500Z-3f2a"),
                 urls.machine_src("fig-harness-floor", machine)]
        assert all(plugin.direct(p) for p in pages)
        assert {plugin._direct_machine(p) for p in pages} == {urls.machine_slug(machine)}
    assert plugin._direct_machine(urls.machine_src("fig-a", "m-1")) != plugin._direct_machine(
        urls.machine_src("fig-a", "m-10"))


def test_the_pages_jobs_go_out_longest_first():
    """A notebook's conversion, then the machines' groups of written pages, then the other mkdocs
    pages: with the groups last, one worker was left alone with the last group at the end."""
    from types import SimpleNamespace

    uris = ("index.md", "verdicts.md", "lessons/lesson.ipynb", "bench/index.md")
    sources = [SimpleNamespace(src_uri=u) for u in uris]
    groups = ["changes m-1", "machine page m-1", "changes m-2"]
    order = plugin._longest_first(sources, groups, lambda f: f.src_uri)
    assert order == ["lessons/lesson.ipynb", *groups, "index.md", "verdicts.md", "bench/index.md"]
