"""The last build's site is moved aside and removed while the next build runs (benchsite/build/sitedir.py):
what mkdocs' own clean would leave (hidden entries) stays, and nothing of the old site is left."""

import logging
import os
import shutil
import subprocess

import pytest

from benchsite.build import sitedir
from conftest import load_hook


def old_site(root):
    (root / "bench" / "fig-a" / "m").mkdir(parents=True)
    (root / "bench" / "fig-a" / "m" / "index.html").write_text("old page")
    (root / "index.html").write_text("old index")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    return root


def listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def visible(root):
    """``listing`` without the folders being removed meanwhile."""
    return [p for p in listing(root) if not p.startswith(sitedir.PREFIX)]


@pytest.mark.slow
def test_the_old_site_is_set_aside_then_removed_and_hidden_entries_stay(tmp_path):
    site = old_site(tmp_path / "site")
    removal = sitedir.set_aside(site)
    # What mkdocs' clean_directory then sees: hidden entries only, which it leaves alone.
    assert sorted(p.name for p in site.iterdir() if not p.name.startswith(".")) == []
    assert (site / ".git" / "HEAD").is_file()
    sitedir.finish(removal)
    assert listing(site) == [".git", ".git/HEAD"]


@pytest.mark.slow
def test_what_a_stopped_build_left_is_removed_by_the_next(tmp_path):
    site = tmp_path / "site"
    (site / f"{sitedir.PREFIX}123" / "bench").mkdir(parents=True)
    (site / f"{sitedir.PREFIX}123" / "bench" / "page.html").write_text("x")
    (site / ".nojekyll").write_text("")
    sitedir.finish(sitedir.set_aside(site))
    assert listing(site) == [".nojekyll"]


def test_no_site_folder_yet_is_nothing_to_do(tmp_path):
    assert sitedir.set_aside(tmp_path / "not-there") is None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert sitedir.set_aside(empty) is None
    sitedir.finish(None)


def test_a_removal_that_cannot_start_is_done_at_the_end(tmp_path, monkeypatch):
    site = old_site(tmp_path / "site")

    def no_process(*args, **kwargs):
        raise OSError("no processes left")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    removal = sitedir.set_aside(site)
    assert removal.process is None and removal.folders
    sitedir.finish(removal)
    assert listing(site) == [".git", ".git/HEAD"]


@pytest.mark.slow
def test_an_entry_that_cannot_be_moved_is_left_for_mkdocs(tmp_path, monkeypatch):
    site = old_site(tmp_path / "site")
    rename = os.rename

    def refuse_index(src, dst):
        if os.path.basename(src) == "index.html":
            raise OSError("busy")
        rename(src, dst)

    monkeypatch.setattr(os, "rename", refuse_index)
    removal = sitedir.set_aside(site)
    assert (site / "index.html").read_text() == "old index"  # mkdocs removes it, as always
    sitedir.finish(removal)
    assert listing(site) == [".git", ".git/HEAD", "index.html"]


@pytest.mark.slow
def test_the_separate_process_does_the_removing(tmp_path):
    site = old_site(tmp_path / "site")
    removal = sitedir.set_aside(site)
    assert removal.process is not None
    removal.process.wait()  # finish() not called: the removal is the process's own work
    assert listing(site) == [".git", ".git/HEAD"]


def test_a_folder_that_cannot_be_removed_is_returned(tmp_path, monkeypatch):
    site = old_site(tmp_path / "site")
    monkeypatch.setattr(sitedir.sys, "executable", "")  # no interpreter to start: finish removes it
    monkeypatch.setattr(sitedir.shutil, "rmtree", lambda path, ignore_errors=False: None)  # and cannot
    removal = sitedir.set_aside(site)
    assert removal.process is None
    assert sitedir.finish(removal) == removal.folders and removal.folders[0].name.startswith(sitedir.PREFIX)


@pytest.mark.slow
def test_the_hook_sets_the_last_site_aside_unless_the_build_is_dirty(monkeypatch, tmp_path, caplog):
    """mkdocs says at start-up whether a build is dirty: then the old pages stay, as asked; otherwise
    they are removed while the build runs, and a folder that could not be removed is named."""
    bench = load_hook("plugin", monkeypatch)
    site = tmp_path / "site"
    (site / "bench").mkdir(parents=True)
    (site / "bench" / "index.html").write_text("old")
    monkeypatch.setattr(bench, "BUILD", [bench.Build(catalog=None, strict_stale=False)])
    bench.on_startup(command="build", dirty=True)
    bench.on_pre_build({"site_dir": str(site)})
    assert bench.BUILD[0].old_site is None and (site / "bench" / "index.html").is_file()
    bench.on_startup(command="build", dirty=False)
    bench.on_pre_build({"site_dir": str(site)})
    assert not (site / "bench").exists()
    monkeypatch.setattr(bench.sitedir, "finish", lambda removal: removal.folders)  # say it stayed
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.bench"):
        bench.on_build_error(RuntimeError("a page failed"))
    assert "the last build's site could not be removed" in caplog.text and bench.BUILD[0].old_site is None


def kept_site(root):
    """A last build with a page to reuse, a stale page, a page path that is now a folder, a
    download path that is a link (written through, it would change the file it points to), and a
    chapter page (not in a kept folder)."""
    (root / "bench" / "fig-a" / "m").mkdir(parents=True)
    (root / "bench" / "fig-a" / "m" / "index.html").write_text("same page")
    (root / "bench" / "fig-a" / "gone").mkdir()
    (root / "bench" / "fig-a" / "gone" / "index.html").write_text("a machine no longer in the site")
    (root / "bench" / "fig-a" / "n" / "index.html").mkdir(parents=True)  # a folder where a page goes
    (root / "bench" / "fig-a" / "n" / "index.html" / "x").write_text("x")
    (root / "results" / "m").mkdir(parents=True)
    (root / "results" / "m" / "removed.csv.gz").write_text("a results file no longer in the site")
    (root / "results" / "m").chmod(0o700)  # a new folder gets 0o777 less the umask
    (root.parent / "outside.txt").write_text("not the site's")
    os.symlink(root.parent / "outside.txt", root / "results" / "m" / "a.csv.gz")
    (root / "chapter").mkdir()
    (root / "chapter" / "index.html").write_text("old chapter")
    return root


@pytest.mark.slow
def test_kept_folders_come_back_holding_only_the_files_to_reuse(tmp_path):
    site = kept_site(tmp_path / "site")
    reused = site / "bench" / "fig-a" / "m" / "index.html"
    before = os.stat(reused)
    removal = sitedir.set_aside(site, keep=("bench", "results"))
    assert removal.kept is not None and removal.kept not in removal.folders
    assert sorted(p.name for p in site.iterdir() if not p.name.startswith(".")) == []  # as mkdocs' clean sees it
    removal.process.wait()  # the removal does not touch what is kept
    assert (removal.kept / "bench" / "fig-a" / "m" / "index.html").read_text() == "same page"
    reuse = {os.path.normpath(site / p) for p in ("bench/fig-a/m/index.html", "bench/fig-a/n/index.html",
                                                  "results/m/a.csv.gz", "bench/fig-b/m/index.html")}
    sitedir.take_back(removal, site, reuse)
    # The page to reuse is the same file; the stale page, the folder in a page's place, the link: gone.
    assert visible(site) == ["bench", "bench/fig-a", "bench/fig-a/m", "bench/fig-a/m/index.html", "bench/fig-a/n",
                             "results", "results/m"]
    assert os.stat(reused).st_ino == before.st_ino
    assert (site / "results" / "m").stat().st_mode & 0o777 == 0o777 & ~umask()
    for path in sorted(reuse):
        sitedir.write_if_changed(b"page" if path.endswith(".html") else b"gz", path)
    assert (site / "bench" / "fig-a" / "n" / "index.html").read_bytes() == b"page"
    assert (tmp_path / "outside.txt").read_text() == "not the site's"  # not written through the old link
    assert sitedir.finish(removal) == [] and listing(site) == [
        "bench", "bench/fig-a", "bench/fig-a/m", "bench/fig-a/m/index.html", "bench/fig-a/n",
        "bench/fig-a/n/index.html", "bench/fig-b", "bench/fig-b/m", "bench/fig-b/m/index.html",
        "results", "results/m", "results/m/a.csv.gz"]


@pytest.mark.slow
def test_a_kept_folder_with_nothing_to_reuse_goes_and_one_not_taken_back_is_removed_at_the_end(tmp_path):
    site = kept_site(tmp_path / "site")
    removal = sitedir.set_aside(site, keep=("bench", "results"))
    (site / "results").mkdir()  # the build made its own: the kept one stays aside
    sitedir.take_back(removal, site, set())
    assert visible(site) == ["results"]
    assert sitedir.finish(removal) == [] and not removal.kept.exists()


def test_a_file_that_holds_its_bytes_is_not_written_and_a_changed_one_is_replaced(tmp_path):
    path = tmp_path / "site" / "page" / "index.html"
    assert sitedir.write_if_changed(b"one", str(path)) and path.read_bytes() == b"one"  # folders made
    os.utime(path, ns=(1, 1))
    assert not sitedir.write_if_changed(b"one", str(path))
    assert os.stat(path).st_mtime_ns == 1  # not opened for writing
    os.link(path, tmp_path / "published.html")  # e.g. a copy made with cp -l
    assert sitedir.write_if_changed(b"two", str(path)) and path.read_bytes() == b"two"
    assert (tmp_path / "published.html").read_bytes() == b"one"  # a new file, not the old one rewritten
    assert sitedir.write_if_changed(b"tw", str(path)) and path.read_bytes() == b"tw"  # shorter: same prefix


@pytest.mark.slow
def test_the_hook_keeps_the_folders_it_fills_except_when_serving(monkeypatch, tmp_path):
    """Every download and every generated page lies in a folder the hook keeps; ``mkdocs serve``
    keeps nothing (it builds into a temporary folder, with drafts)."""
    from benchkit import layout
    from benchsite.core import urls

    bench = load_hook("plugin", monkeypatch)
    results = tmp_path / "results"
    (results / "m").mkdir(parents=True)
    (results / "m" / "a.csv").write_text("x")
    (results / "m" / "a.trace.json.gz").write_text("x")
    assert {uri.split("/")[0] for uri, _ in layout.published_files(results)} | {urls.BENCH_PAGES} \
        == set(bench.REUSED)
    site = kept_site(tmp_path / "site")
    monkeypatch.setattr(bench, "BUILD", [bench.Build(catalog=None, strict_stale=False)])
    bench.on_startup(command="serve", dirty=False)
    bench.on_pre_build({"site_dir": str(site)})
    assert bench.BUILD[0].old_site.kept is None
    sitedir.finish(bench.BUILD[0].old_site)
    kept_site(site)
    bench.on_startup(command="build", dirty=False)
    bench.on_pre_build({"site_dir": str(site)})
    assert sorted(os.listdir(bench.BUILD[0].old_site.kept)) == ["bench", "results"]
    sitedir.finish(bench.BUILD[0].old_site)


@pytest.mark.slow
def test_a_kept_folder_that_cannot_be_cleared_is_returned(tmp_path, monkeypatch):
    site = kept_site(tmp_path / "site")
    removal = sitedir.set_aside(site, keep=("bench", "results"))
    unlink = os.unlink

    def stuck(path, *args, **kwargs):
        if str(path).endswith("a.csv.gz"):
            raise PermissionError(path)
        unlink(path, *args, **kwargs)

    rmtree = shutil.rmtree

    def stuck_tree(path, ignore_errors=False):  # as shutil's, on a folder holding a file it cannot remove
        if "results" not in str(path):
            rmtree(path, ignore_errors=ignore_errors)
        elif not ignore_errors:
            raise PermissionError(path)

    monkeypatch.setattr(sitedir.os, "unlink", stuck)
    monkeypatch.setattr(sitedir.shutil, "rmtree", stuck_tree)
    reuse = {os.path.normpath(site / p) for p in ("bench/fig-a/m/index.html", "results/m/b.csv.gz")}
    assert sitedir.take_back(removal, site, reuse) == [os.path.normpath(site / "results")]
    monkeypatch.undo()
    sitedir.finish(removal)


@pytest.mark.slow
def test_a_link_or_a_file_in_a_kept_folder_s_place_is_not_kept(tmp_path):
    """A link is never followed: the folder it leads to, outside the site, is left as it is."""
    site = tmp_path / "site"
    site.mkdir()
    (tmp_path / "elsewhere" / "m").mkdir(parents=True)
    (tmp_path / "elsewhere" / "m" / "precious.txt").write_text("keep me")
    os.symlink(tmp_path / "elsewhere", site / "results")
    (site / "bench").write_text("a file where a folder goes")
    removal = sitedir.set_aside(site, keep=("bench", "results"))
    assert removal.kept is None
    sitedir.take_back(removal, site, {os.path.normpath(site / "results" / "m" / "precious.txt")})
    assert sitedir.finish(removal) == [] and visible(site) == []
    assert (tmp_path / "elsewhere" / "m" / "precious.txt").read_text() == "keep me"


def test_a_link_or_another_mode_is_written_afresh(tmp_path):
    path = tmp_path / "page.html"
    (tmp_path / "outside").write_bytes(b"same")
    path.symlink_to(tmp_path / "outside")
    assert sitedir.write_if_changed(b"same", str(path))  # the bytes match, through a link: replaced
    assert not path.is_symlink() and (tmp_path / "outside").read_bytes() == b"same"
    path.chmod(0o600)
    assert sitedir.write_if_changed(b"same", str(path))
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask()
    assert not sitedir.write_if_changed(b"same", str(path))
