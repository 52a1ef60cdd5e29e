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
