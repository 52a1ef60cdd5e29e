"""Kept sessions: the compact per-run summaries, their validator, history and what changed."""

import csv
import gzip
import importlib.util
import math
import os
import re
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

import benchfixtures
from benchfixtures import demo_figure, render_page, write_machine
from benchkit import archive
from benchkit.schema import V3_MISSING
from benchsite.model import sessions, stats
from benchsite.model.catalog import Catalog
from conftest import REFERENCE, REPO, committed_catalog

docs = benchfixtures.docs  # the fixture: a docs folder whose chapter embeds fig-demo

OLD, NEW = "20260101T000000Z-0001", "20260201T000000Z-0002"
BUDGET = 200_000  # bytes per machine for one kept session of all figures  # the budget


@pytest.fixture(autouse=True)
def scratch_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))


def rewrite(path, out, session, machine=None, where=None, by=1.0):
    """A copy of results file ``path`` at ``out`` as if measured in ``session`` (on ``machine``),
    the times of the rows matching ``where`` (column -> text) multiplied by ``by``."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames, list(reader)
    for row in rows:
        row["session_id"] = session
        row["machine"] = machine or row["machine"]
        if where and all(row[k] == v for k, v in where.items()):
            row["time_s"] = repr(float(row["time_s"]) * by)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return out


def keep_as(path, results, session, scratch, **change):
    """Keep the file's data as an earlier session ``session`` under results/<machine>/sessions/."""
    copy = rewrite(path, scratch / path.parent.name / path.name, session, **change)
    return archive.archive(copy, results)


# --- compaction on the committed data ------------------------------------------------------

def test_the_committed_catalog_is_what_catalog_build_makes():
    """conftest.committed_catalog (the committed files validated once a process) gives what
    Catalog.build gives, to the bit: the same figures, errors, orphans, frames in the same order,
    nothing made yet; and a test that changes a frame changes no other call's."""
    want = Catalog.build(REPO / "results", preferred=REFERENCE, declared=REFERENCE)
    got = committed_catalog(preferred=REFERENCE, declared=REFERENCE)
    fields = ("results", "figures", "errors", "orphans", "preferred", "declared", "bench_dir", "disk", "cache", "_memo")
    assert [getattr(got, f) for f in fields] == [getattr(want, f) for f in fields]
    assert list(got.frames) == list(want.frames) and len(want.frames) > 20
    for key in want.frames:
        pd.testing.assert_frame_equal(got.frames[key], want.frames[key], check_exact=True, obj=str(key))
        assert list(got.frames[key].dtypes.astype(str)) == list(want.frames[key].dtypes.astype(str)), key
    key = next(iter(want.frames))
    got.frames[key]["time_s"] *= 2
    got.frames[next(k for k in want.frames if k != key)] = want.frames[key]
    again = committed_catalog()
    assert again.preferred is None and again.declared is None
    for k in want.frames:
        pd.testing.assert_frame_equal(again.frames[k], want.frames[k], check_exact=True, obj=str(k))


@pytest.fixture(scope="module")
def committed():
    return committed_catalog(preferred=REFERENCE)


def test_summaries_equal_what_the_table_model_computes_from_the_raw_file(committed):
    checked = 0
    for tab in committed.tables():
        hist = sessions.history(committed, tab.fig.id, tab.machine)
        (session,) = [s for s in hist.sessions if s.latest]  # earlier sessions may be kept too
        assert session.id == tab.frame["session_id"].iloc[0]
        kept = session.table
        assert [r.label for r in kept.rows] == [r.label for r in tab.rows], tab.fig.id
        for full, short in zip(tab.rows, kept.rows):
            assert full.cells == short.cells, (tab.fig.id, full.label)  # median, min, max, runs
            assert {v: s.values for v, s in full.cells.items()} == {v: s.values for v, s in short.cells.items()}
            assert full.ratio == short.ratio
            assert (full.verdict and full.verdict.text) == (short.verdict and short.verdict.text)
            for variant in full.cells:
                within = stats.within_spread(full.samples[full.samples["variant"] == variant])
                assert math.isclose(within, session.within(variant, full.label), rel_tol=1e-9) or \
                    (within != within and session.within(variant, full.label) != session.within(variant, full.label))
            checked += 1
        assert tab.headline == kept.headline, tab.fig.id
        assert tab.quantities.keys() == kept.quantities.keys() and tab.workloads == kept.workloads
    assert checked >= 20


# A sample's count in a results file, the run's median in a session; a sample's text, not kept.
NOT_ALIKE = {"calls", "compiles", "detail"}


def test_the_latest_session_without_the_history_is_the_historys_latest(committed):
    """``sessions.latest`` (a page's header: which session it quotes) reads no kept session, and
    names the session ``history(...).latest`` does, on every committed pair, before and after the
    history is made."""
    fresh = committed_catalog()
    for fig_id, machine in sorted(fresh.frames):
        alone = sessions.latest(fresh, fig_id, machine)
        assert ("history", fig_id, machine) not in fresh.derived  # no history was made for it
        whole = sessions.history(fresh, fig_id, machine).latest
        assert (alone is None) == (whole is None)
        if whole is not None:
            assert (alone.id, alone.date, alone.latest) == (whole.id, whole.date, whole.latest)
        assert sessions.latest(fresh, fig_id, machine) is whole


def test_a_pages_sessions_are_made_from_the_catalogs_one_call_and_shared_with_history(committed):
    """A figure page's sessions come from what ``Catalog.page_facts`` read (the kept sessions' texts,
    read once per build) and are the very History that ``sessions.history`` then returns: one made
    per figure and machine, whichever asks first; and the one ``sessions.history`` makes on its own
    (the same sessions, each kept by the same digest, the same errors)."""
    from benchsite.model import pagefacts

    fresh, alone = committed_catalog(), committed_catalog()  # two catalogs: nothing made in either yet
    for fig_id in sorted({f for f, _ in fresh.frames}):
        found = fresh.page_facts(fig_id, None, 6)
        for machine, texts in found.texts.items():
            assert fresh.session_texts(fig_id, machine) is texts  # read once, in the page's one call
        facts = pagefacts.gather(fresh, fig_id, None, 6)
        for m in facts.machines:
            if m.history is not None:
                assert sessions.history(fresh, fig_id, m.name) is m.history
                assert m.history.sessions and m.history.latest is not None
                own = sessions.history(alone, fig_id, m.name)
                assert [(s.id, s.digest) for s in m.history.sessions] == [(s.id, s.digest) for s in own.sessions]
                assert m.history.errors == own.errors

def test_a_pages_latest_session_follows_an_edit_of_its_results_file_on_a_warm_cache(tmp_path, monkeypatch):
    """The latest session a page shows (``pagefacts.gather`` -> ``sessions.of_texts``) is kept under the
    build cache by its results file's digest, the one the page's table was kept by: after an edit of
    the file, a warm build shows what a cold build of the edited file shows, not the session it kept."""
    from benchsite.model import pagefacts

    fig, path = demo(tmp_path)

    def latest():
        return pagefacts.gather(Catalog.build(tmp_path / "results", {fig.id: fig}), fig.id, None, 6).get(
            "cpu-a").history.latest

    before = latest()
    rewrite(path, path, before.id, where={"machine": "cpu-a"}, by=3.0)  # the same session, 3 times longer
    warm = latest()
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cold"))
    cold = latest()
    assert warm.id == cold.id == before.id and not before.frame.equals(cold.frame)
    pd.testing.assert_frame_equal(warm.frame, cold.frame)



def test_a_session_is_typed_as_its_results_file(committed):
    """The one validator types a column of a kept or compacted session as it types the same column
    of a results file: a session's table reads the frame a results file's table reads."""
    checked = 0
    for tab in committed.tables():
        whole = committed.frame(tab.fig.id, tab.machine)
        for session in sessions.history(committed, tab.fig.id, tab.machine).sessions:
            frame = session.frame
            shared = [c for c in frame.columns if c in whole.columns and c not in NOT_ALIKE]
            assert len(shared) > 40, (tab.fig.id, session.id)
            if session.latest:  # the same rows' values: the same dtypes, the same kinds of object
                assert {c: frame[c].dtype for c in shared} == {c: whole[c].dtype for c in shared}, session.id
                for col in shared:
                    assert {type(v) for v in frame[col].tolist()} <= {type(v) for v in whole[col].tolist()}, col
            else:  # another session: a number is a number, a text an object, as in a results file
                for col in shared:
                    kinds = {frame[col].dtype.kind, whole[col].dtype.kind}
                    assert kinds <= {"i", "f"} or len(kinds) == 1, (session.id, col, kinds)
            for col in shared:  # each distinct text of a column stored once, as load() keeps it
                texts = [v for v in frame[col].tolist() if isinstance(v, str)] if not col.startswith("p_") else []
                assert len({id(v) for v in texts}) == len(set(texts)), col
            checked += 1
    assert checked >= 26


def test_a_kept_session_of_every_figure_fits_the_budget(committed, tmp_path):
    for machine in {t.machine for t in committed.tables()}:
        total = 0
        for tab in committed.tables():
            if tab.machine == machine:
                total += sum(p.stat().st_size for p in archive.archive(committed.csv_path(tab.fig.id, machine),
                                                                          tmp_path / "r"))
        print(f"{machine}: one kept session of every figure = {total} bytes")
        assert 0 < total <= BUDGET, (machine, total)


def test_archiving_twice_writes_the_same_bytes_once(tmp_path):
    path = REPO / "results" / REFERENCE / "naive_vs_blocked.csv"
    first = archive.archive(path, tmp_path / "a")
    assert [p.name for p in first] == ["naive_vs_blocked.csv.gz", "naive_vs_blocked.runs.csv.gz"]
    assert archive.archive(path, tmp_path / "a") == []  # there already
    again = archive.archive(path, tmp_path / "b")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in again]  # machine folders merge by copying


def _as_kept(path):
    """The frames ``session_files.parse`` makes of what ``archive`` would keep of the file ``path``."""
    from benchsite.model import session_files

    return {sid: session_files.parse(summary, runs, (str(path), str(path)), path.parent.name,
                                     path.name.removesuffix(".csv"), sid)
            for sid, (summary, runs) in archive.compact_file(path).items()}


def _assert_same_frames(want: dict, got: dict, where) -> None:
    assert list(want) == list(got), where
    for sid in want:
        pd.testing.assert_frame_equal(want[sid], got[sid], check_exact=True, obj=f"{where} {sid}")
        assert list(want[sid].dtypes.astype(str)) == list(got[sid].dtypes.astype(str)), where


def test_the_latest_session_from_the_validated_frame_is_the_kept_session(tmp_path):
    """The history makes the latest session from the frame the loader validated, without writing it
    as text: the same frame, number for number and type for type, as the session's kept files give
    once archived. For every committed results file, one with CRLF line ends and a quoted comma, one
    of schema version 3, and one holding two sessions with a provenance cell empty in one run."""
    from benchkit.layout import ResultFile, discover
    from benchkit.schema import figure_id_for
    from benchsite.model import load, session_files

    validated = committed_catalog().frames  # load.load of each file (test_the_committed_catalog_is_...)
    for file in discover(REPO / "results"):
        key = (figure_id_for(file.stem), file.machine)
        frame = validated[key] if key in validated else load.load(file)
        _assert_same_frames(_as_kept(file.path), session_files.from_results(frame), file.path)

    folder = tmp_path / REFERENCE
    folder.mkdir(parents=True)
    sources = sorted((REPO / "results" / REFERENCE).glob("*.csv"))
    text = sources[0].read_text(encoding="utf-8").splitlines()
    head, cells = text[0].split(","), text[1].split(",")
    cells[head.index("xla_flags")] = '"--a=1,--b=2"'  # a comma inside a quoted cell
    (folder / sources[0].name).write_bytes(("\r\n".join([text[0], ",".join(cells), *text[2:]]) + "\r\n").encode())

    rows = list(csv.reader(sources[1].open(newline="", encoding="utf-8")))
    old = [[v for c, v in zip(rows[0], r) if c not in V3_MISSING] for r in rows]  # as schema 3 wrote them
    version = old[0].index("schema_version")
    for r in old[1:]:
        r[version] = "3"
    _write_csv(folder / sources[1].name, old)

    rows = list(csv.reader(sources[2].open(newline="", encoding="utf-8")))
    at = {c: i for i, c in enumerate(rows[0])}
    for k, r in enumerate(rows[1:]):
        if k >= len(rows) // 2:
            r[at["session_id"]] = "20261209T000000Z-aaaa"  # a second session in the same file
        if r[at["run"]] == "1":
            r[at["mem_total_bytes"]] = ""
    _write_csv(folder / sources[2].name, rows)

    made = {}
    for path in sorted(folder.glob("*.csv")):
        made[path.name] = session_files.from_results(load.load(ResultFile(REFERENCE, path.stem, path)))
        _assert_same_frames(_as_kept(path), made[path.name], path)
    assert "--a=1,--b=2" in set(next(iter(made[sources[0].name].values()))["xla_flags"])
    assert len(made[sources[2].name]) == 2


def test_a_sessions_cells_are_the_same_when_their_codes_are_renumbered_at_every_column(monkeypatch):
    """``from_results`` numbers each row's cell by its columns' codes, renumbering the product only
    before it could overflow; renumbering at every column gives the same frames."""
    from benchkit.layout import discover
    from benchsite.model import load, session_files

    frames = [load.load(f) for f in discover(REPO / "results") if f.machine == REFERENCE][:6]
    want = [session_files.from_results(f) for f in frames]
    monkeypatch.setattr(session_files, "_MOST_CODES", 2)
    for frame, made in zip(frames, want):
        got = session_files.from_results(frame)
        assert list(got) == list(made)
        for sid in made:
            pd.testing.assert_frame_equal(got[sid], made[sid], check_exact=True)


def _write_csv(path, rows) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


def test_the_history_reads_no_text_of_the_latest_session(tmp_path, monkeypatch):
    """No round trip: the latest session is neither compacted to text nor parsed back."""
    from benchsite.model import session_files

    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(archive, "compact", lambda *a, **k: pytest.fail("the results file was compacted"))
    parsed = []
    real = session_files.parse
    monkeypatch.setattr(session_files, "parse", lambda *a: parsed.append(a[5]) or real(*a))
    cat = committed_catalog()
    fig_id, machine = next((f, m) for f, m in sorted(cat.frames) if cat.kept(m, cat.figures[f].stem))
    hist = sessions.history(cat, fig_id, machine)
    assert hist.latest is not None and hist.latest.id not in parsed
    assert sorted(parsed) == sorted(cat.kept(machine, cat.figures[fig_id].stem)) == hist.ids[:-1]


# --- the validator -------------------------------------------------------------------------

def demo(tmp_path, runs=5):
    fig = demo_figure(tmp_path)
    path = write_machine(tmp_path / "results", "cpu-a", runs=runs)
    return fig, path


def damage(path, line, col, text):
    rows = gzip.decompress(path.read_bytes()).decode().splitlines()
    head = rows[0].split(",")
    cells = rows[line - 1].split(",")
    cells[head.index(col)] = text
    rows[line - 1] = ",".join(cells)
    path.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))


@pytest.mark.parametrize("col, text, message", [
    ("median_s", "-1", r"\.csv\.gz:3: column 'median_s' is -1\.0; a time must be positive"),
    ("samples", "many", r"\.csv\.gz:3: column 'samples' has 'many', not a valid integer"),
    # one rule for a number, the results file's (load.number): what float() and int() read beyond it
    ("cache_hits", "1_000", r"\.csv\.gz:3: column 'cache_hits' has '1_000', not a valid integer$"),
    ("calls", " 12", r"\.csv\.gz:3: column 'calls' has ' 12', not a valid number$"),
    ("samples", "9" * 40,
     r"\.csv\.gz:3: column 'samples' has '9{40}', not a valid integer \(beyond the 64-bit range\)"),
    ("summary_version", "9", r"\.csv\.gz:3: summary_version 9 is not one this site reads"),
    ("run", "42", r"\.csv\.gz:3: run 42 has no provenance in demo\.runs\.csv\.gz \(a partial session\)"),
])
def test_a_damaged_kept_session_is_refused_with_file_and_line(tmp_path, col, text, message):
    fig, path = demo(tmp_path)
    keep_as(path, tmp_path / "results", OLD, tmp_path / "scratch")
    damage(archive.summary_file(tmp_path / "results", "cpu-a", OLD, "demo"), 3, col, text)
    cat = Catalog.build(tmp_path / "results", {fig.id: fig})
    hist = sessions.history(cat, fig.id, "cpu-a")
    assert re.search(re.escape(f"sessions/{OLD}/demo") + message, hist.errors[OLD]), hist.errors
    assert [s.id for s in hist.sessions] == ["20260101T000000Z-test"]  # the latest is not affected
    assert cat.table(fig.id, "cpu-a").rows  # nor the results file


def test_a_kept_sessions_columns_are_read_by_name_as_a_results_files_are(tmp_path):
    """A results file with its columns in another order is valid (load reads them by name) and is
    compacted with them in that order; its sessions read the same as in the writer's order."""
    fig, path = demo(tmp_path)
    keep_as(path, tmp_path / "results", OLD, tmp_path / "scratch")
    before = sessions.history(Catalog.build(tmp_path / "results", {fig.id: fig}), fig.id, "cpu-a")
    for file in (archive.summary_file(tmp_path / "results", "cpu-a", OLD, "demo"),
                 archive.runs_file(tmp_path / "results", "cpu-a", OLD, "demo")):
        rows = [line.split(",") for line in gzip.decompress(file.read_bytes()).decode().splitlines()]
        file.write_bytes(gzip.compress("".join(",".join([*r[5:], *r[:5]]) + "\n" for r in rows).encode()))
    after = sessions.history(Catalog.build(tmp_path / "results", {fig.id: fig}), fig.id, "cpu-a")
    assert after.errors == {} and [s.id for s in after.sessions] == [s.id for s in before.sessions]
    pd.testing.assert_frame_equal(after.get(OLD).frame, before.get(OLD).frame)


def test_a_partial_session_is_refused(tmp_path):
    fig, path = demo(tmp_path)
    keep_as(path, tmp_path / "results", OLD, tmp_path / "scratch")
    archive.runs_file(tmp_path / "results", "cpu-a", OLD, "demo").unlink()
    cat = Catalog.build(tmp_path / "results", {fig.id: fig})
    error = sessions.history(cat, fig.id, "cpu-a").errors[OLD]
    assert f"sessions/{OLD}/demo.csv.gz:1: demo.runs.csv.gz is missing beside it (a partial session)" in error


def test_a_session_whose_provenance_names_another_place_is_refused(tmp_path):
    fig, path = demo(tmp_path)
    written = keep_as(path, tmp_path / "results", OLD, tmp_path / "scratch")
    os.rename(written[0].parent, written[0].parent.with_name(NEW))  # copied into the wrong folder
    cat = Catalog.build(tmp_path / "results", {fig.id: fig})
    assert f"demo.runs.csv.gz:2: session_id '{OLD}' does not match its place" in \
        sessions.history(cat, fig.id, "cpu-a").errors[NEW]


def test_a_kept_sessions_run_times_and_folder_name_are_checked_as_the_results_files_are(tmp_path):
    """The run's start time is read as a time and shown as a day, and the folder's name is the
    session page's URL: a kept session with either wrong is refused with file and line, as a
    results file is (load.timestamp_ok, load.session_id_ok)."""
    fig, path = demo(tmp_path)
    keep_as(path, tmp_path / "results", OLD, tmp_path / "scratch")
    damage(archive.runs_file(tmp_path / "results", "cpu-a", OLD, "demo"), 3, "timestamp_utc", "<i>soon</i>")
    cat = Catalog.build(tmp_path / "results", {fig.id: fig})
    assert re.search(re.escape(f"sessions/{OLD}/demo.runs.csv.gz:3: timestamp_utc '<i>soon</i>' is not a UTC time"),
                     sessions.history(cat, fig.id, "cpu-a").errors[OLD])

    (tmp_path / "again").mkdir()
    fig, path = demo(tmp_path / "again")
    root = tmp_path / "again" / "results"
    written = keep_as(path, root, OLD, tmp_path / "again" / "scratch")
    odd = "old one"
    os.rename(written[0].parent, written[0].parent.with_name(odd))
    runs = archive.runs_file(root, "cpu-a", odd, "demo")
    runs.write_bytes(gzip.compress(gzip.decompress(runs.read_bytes()).replace(OLD.encode(), odd.encode())))
    cat = Catalog.build(root, {fig.id: fig})
    assert f"demo.runs.csv.gz:2: session_id '{odd}' is not a session id" in \
        sessions.history(cat, fig.id, "cpu-a").errors[odd]


# --- history and what changed --------------------------------------------------------------

def two_sessions(tmp_path, where=None, by=1.0):
    """demo on cpu-a: an earlier session kept, and the results file now holding a later one in
    which the rows matching ``where`` took ``by`` times as long."""
    fig, path = demo(tmp_path)
    keep_as(path, tmp_path / "results", OLD, tmp_path / "scratch", machine=None)
    rewrite(path, path, NEW, where=where, by=by)
    return Catalog.build(tmp_path / "results", {fig.id: fig}, preferred="cpu-a")


def test_the_machine_page_shows_each_session_and_the_step_between(tmp_path, docs):
    cat = two_sessions(tmp_path, where={"variant": "slow", "params": "n=16"}, by=2.0)
    assert set(pages_of(cat)) >= {f"bench/fig-demo/cpu-a/{OLD}.md", f"bench/fig-demo/cpu-a/{NEW}.md",
                                  "bench/changes/cpu-a.md"}
    html = render_page(cat, "bench/fig-demo/cpu-a.md", docs)
    assert f"Latest session: **{NEW}**" in html and f"](cpu-a/{NEW}.md)" in html
    history = html.split('class="bench-history"', 1)[1]
    assert history.count("<circle") == 2 and "jax 0.10.2" in history  # one point a session
    assert f"/bench/fig-demo/cpu-a/{OLD}/" in history and f"/bench/fig-demo/cpu-a/{NEW}/" in history
    assert "2 of 6 differences are results (unpaired rule)" in history  # slow and slow / fast at n=16
    assert "load average at start" in history


def pages_of(cat):
    from benchsite.pages import pages
    return pages.generated_pages(cat)


def test_what_changed_lists_the_scaled_cell_and_not_the_others(tmp_path, docs):
    cat = two_sessions(tmp_path, where={"variant": "slow", "params": "n=16"}, by=2.0)
    html = render_page(cat, "bench/changes/cpu-a.md", docs)
    moved = re.findall(r"<tr><td data-title>([^<]*)</td>", html.split('class="bench-moved"', 1)[1])
    assert moved == ["slow at n=16", "slow / fast at n=16"]
    assert "n=8" not in html
    assert "](changes/cpu-a.md)" in render_page(cat, "bench/index.md", docs)


def test_a_jax_upgrade_shows_in_the_environment_diff(tmp_path, docs):
    fig, path = demo(tmp_path)
    keep_as(path, tmp_path / "results", OLD, tmp_path / "scratch")
    text = path.read_text().replace(",0.10.2,", ",0.11.0,")
    path.write_text(text)
    cat = Catalog.build(tmp_path / "results", {fig.id: fig}, preferred="cpu-a")
    html = render_page(cat, "bench/changes/cpu-a.md", docs)
    assert "jax <code>0.10.2</code> → <code>0.11.0</code>" in html
    assert "No cell moved" in html


def test_a_session_page_shows_that_session_and_its_cite_block(tmp_path, docs):
    cat = two_sessions(tmp_path, where={"variant": "slow"}, by=3.0)
    old = render_page(cat, f"bench/fig-demo/cpu-a/{OLD}.md", docs)
    assert "cannot change: that session's samples" in old and "can change a verdict here" in old
    assert "100× [" in old and "300× [" not in old  # the earlier session's ratio
    assert "every-sample" not in old and "bench-samples" not in old  # no chart of samples: none kept
    assert f"url       &lt;site address&gt;/bench/fig-demo/cpu-a/{OLD}/" in old  # no site_url: none made up
    assert "make bench ONLY=demo MACHINE=cpu-a" in old and "requirements.txt" in old
    assert f"[fig-demo on cpu-a, session {OLD}: slow / fast at n=16 = 100× [" in old


@pytest.mark.parametrize("declared", [2, None])
def test_a_session_page_says_only_what_its_own_files_record_of_processes(tmp_path, docs, declared):
    """A kept session's summaries drop the per-sample process count, so its page says "how many
    not kept" (it once said "separate processes" of a figure of two processes a run), whatever
    the figure declares today; and editing the script today leaves the page as it was (a page
    that took the count from today's script changed when the script did)."""
    from benchkit.provenance import sha256_file

    fig = demo_figure(tmp_path, extra={"processes": declared} if declared else {})
    path = write_machine(tmp_path / "results", "cpu-a", sha=sha256_file(fig.script))  # today's script ran
    keep_as(path, tmp_path / "results", OLD, tmp_path / "scratch")
    rewrite(path, path, NEW)

    def page() -> str:
        cat = Catalog.build(tmp_path / "results", {fig.id: fig}, preferred="cpu-a")
        return render_page(cat, f"bench/fig-demo/cpu-a/{OLD}.md", docs)

    before = page()
    assert "runs (fresh processes; the kept summaries do not keep how many a run used)" in before
    assert before.count(" runs (") == 1
    fig.script.write_text(fig.script.read_text() + "# edited after the session\n")
    assert page() == before


# --- run.py keeps the session it replaces --------------------------------------------------

FAKE = textwrap.dedent('''
    from benchkit import Recorder, Sample, figure_main
    FIGURE = {"title": "t", "caption": "c", "chapter": "index.md", "variants": ["v"]}
    def measure(rec: Recorder) -> None:
        rec.add("v", "completed", [Sample(0.002), Sample(0.003)], dtype="float32", shape="1")
    if __name__ == "__main__":
        figure_main(__file__, measure)
''')


def load_run_py():
    spec = importlib.util.spec_from_file_location("bench_run", REPO / "bench_scripts" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_run_py_keeps_the_previous_session_before_replacing_the_file(tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "benchkit").symlink_to(REPO / "bench_scripts" / "benchkit")
    (bench / "good.py").write_text(FAKE)
    results = tmp_path / "results"
    old = write_machine(results, "fake-machine", stem="good", fig_id="fig-good", variants=(("v", 1e-3),))
    before = old.read_bytes()
    run = load_run_py()
    seen = []
    real = archive.archive

    def spy(path, results_dir, keep=()):
        seen.append((path.read_bytes() == before, tuple(keep)))  # the old file is still there
        return real(path, results_dir, keep)

    monkeypatch.setattr(run.archive, "archive", spy)
    monkeypatch.setenv("MACHINE", "fake-machine")
    assert run.main(["--results", str(results), "--runs", "1", "--only", "good", "--session", NEW],
                    bench_dir=bench) == 0
    assert seen == [(True, (NEW,))]
    kept = archive.summary_file(results, "fake-machine", "20260101T000000Z-test", "good")
    assert kept.is_file() and archive.runs_file(results, "fake-machine", "20260101T000000Z-test", "good").is_file()
    assert f",{NEW}," in old.read_text()  # and then the file was replaced
    fig = demo_figure(tmp_path, id="fig-good", stem="good", variants=("v",), group_by=(), ratio=None)
    cat = Catalog.build(results, {fig.id: fig})
    assert [s.id for s in sessions.history(cat, "fig-good", "fake-machine").sessions] == \
        ["20260101T000000Z-test", NEW]


@pytest.mark.slow
def test_run_py_needs_no_pandas():
    code = ("import sys; sys.modules['pandas'] = None; sys.path.insert(0, 'bench_scripts'); "
            "import run; assert run.archive.compact")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_an_upgrade_is_compared_across_the_jax_versions_not_the_last_two_sessions():
    import pytest

    from benchsite.pages.history import _pair

    class Fake:
        def __init__(self, sid, jax):
            self.id, self.jax = sid, jax

        def values(self, col):
            assert col == "jax_version"
            return self.jax

    a, b, c, d = Fake("a", "0.10.2"), Fake("b", "0.10.2"), Fake("c", "0.12.0.1"), Fake("d", "0.12.0.1")
    assert _pair((a, b, c, d), None, None) == (c, d)  # default: the last two
    assert _pair((a, b, c, d), "0.10.2", "0.12.0.1") == (b, c)  # the last old one, the first new one
    assert _pair((a, b), "0.10.2", "0.12.0.1") is None and _pair((a,), None, None) is None
    with pytest.raises(ValueError):
        _pair((a, b), "0.10.2", None)


def test_two_sessions_can_be_named():
    from benchsite.pages.history import _pair

    class Fake:
        def __init__(self, sid):
            self.id = sid

    a, b, c = Fake("a"), Fake("b"), Fake("c")
    assert _pair((a, b, c), None, None, "a", "b") == (a, b)
    assert _pair((a, c), None, None, "a", "b") is None
