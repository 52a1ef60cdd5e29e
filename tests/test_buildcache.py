"""The build cache: made once per distinct input, never served for a changed one."""

import pytest

from benchfixtures import demo_figure, write_machine
from benchsite import buildcache, render
from benchsite.catalog import CodeHash
from benchsite.load import ResultFile, load


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    buildcache.forget()
    calls = []

    def fake_chart(frame, fig):  # drawing is what the cache saves; count it
        calls.append(frame.iloc[0]["machine"])
        return f"<svg>{frame['time_s'].sum()}</svg>"

    monkeypatch.setattr(render, "panel_chart", fake_chart)
    path = write_machine(tmp_path / "results", "cpu-a")
    yield demo_figure(tmp_path), path, calls
    buildcache.forget()


def frame_of(path):
    return load(ResultFile(path.parent.name, path.stem, path))


def test_a_chart_is_drawn_once_then_read_back(setup):
    fig, path, calls = setup
    first = buildcache.chart_placeholder(frame_of(path), fig)
    buildcache.forget()  # a new build: memory is empty, the disk is not
    assert buildcache.chart_placeholder(frame_of(path), fig) == first
    assert calls == ["cpu-a"]
    assert buildcache.fill(f"<p>{first}</p>").startswith("<p><svg>")


def test_changed_samples_draw_a_new_chart(setup):
    fig, path, calls = setup
    before = buildcache.chart_placeholder(frame_of(path), fig)
    write_machine(path.parents[1], "cpu-a", scale=2.0)
    assert buildcache.chart_placeholder(frame_of(path), fig) != before
    assert calls == ["cpu-a", "cpu-a"]


def test_a_panel_is_rendered_again_when_its_inputs_change(setup, monkeypatch):
    fig, path, _ = setup
    frame = frame_of(path)
    rendered = []
    real = render.machine_panel
    monkeypatch.setattr(render, "machine_panel", lambda *a: rendered.append(a[2:4]) or real(*a))
    one, two = CodeHash("sha-1", "h"), CodeHash("sha-2", "h")
    panel = buildcache.machine_panel(frame, fig, one, "a.csv", path)
    assert buildcache.machine_panel(frame, fig, one, "a.csv", path) == panel
    buildcache.machine_panel(frame, fig, two, "a.csv", path)  # the script changed: stale now
    buildcache.machine_panel(frame, fig, one, "../a.csv", path)  # another page's link
    assert rendered == [(one, "a.csv"), (two, "a.csv"), (one, "../a.csv")]
    assert "<!--bench-chart:" in panel and "<svg" not in panel  # the chart goes in after Markdown
