"""The last build's site is moved aside and removed while the next build runs (benchsite/sitedir.py):
what mkdocs' own clean would leave (hidden entries) stays, and nothing of the old site is left."""

import logging
import os
import subprocess

from benchsite import sitedir
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


def test_the_old_site_is_set_aside_then_removed_and_hidden_entries_stay(tmp_path):
    site = old_site(tmp_path / "site")
    removal = sitedir.set_aside(site)
    # What mkdocs' clean_directory then sees: hidden entries only, which it leaves alone.
    assert sorted(p.name for p in site.iterdir() if not p.name.startswith(".")) == []
    assert (site / ".git" / "HEAD").is_file()
    sitedir.finish(removal)
    assert listing(site) == [".git", ".git/HEAD"]


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


def test_the_hook_sets_the_last_site_aside_unless_the_build_is_dirty(monkeypatch, tmp_path, caplog):
    """mkdocs says at start-up whether a build is dirty: then the old pages stay, as asked; otherwise
    they are removed while the build runs, and a folder that could not be removed is named."""
    bench = load_hook("bench", monkeypatch)
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
