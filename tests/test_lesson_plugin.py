"""The lesson plugin: mkdocs-jupyter under another name, its heavy imports put off until used."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from benchsite.build import lesson_plugin
from conftest import REPO


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package ``heavy`` whose submodule ``slow`` counts its imports in ``heavy.imported``."""
    (tmp_path / "heavy").mkdir()
    (tmp_path / "heavy" / "__init__.py").write_text("imported = []\n")
    (tmp_path / "heavy" / "slow.py").write_text("import heavy\nheavy.imported.append('slow')\nVALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("heavy", "heavy.slow"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield
    for name in ("heavy", "heavy.slow"):
        sys.modules.pop(name, None)


def test_a_deferred_module_is_imported_on_the_first_attribute_read_and_only_then(package):
    stand_in = lesson_plugin.defer("heavy.slow")
    import heavy
    from heavy import slow  # what mkdocs_jupyter.plugin does: ``from . import convert``

    assert slow is stand_in and heavy.imported == []
    assert slow.VALUE == 42 and heavy.imported == ["slow"]
    assert slow.VALUE == 42 and heavy.imported == ["slow"]  # imported once
    assert sys.modules["heavy.slow"] is not stand_in  # the real module, for whoever imports it next
    with pytest.raises(AttributeError):
        getattr(slow, "missing")  # noqa: B009 - a read that must fail


def test_a_deferred_module_is_imported_with_the_import_settings_then_they_are_undone(package, tmp_path, monkeypatch):
    (tmp_path / "heavy" / "slow.py").write_text(
        "import os, heavy\nheavy.imported.append(os.environ.get('NBCONVERT_DISABLE_CONFIG_EXPORTERS'))\nVALUE = 1\n")
    monkeypatch.delenv("NBCONVERT_DISABLE_CONFIG_EXPORTERS", raising=False)
    slow = lesson_plugin.defer("heavy.slow")
    import heavy

    assert lesson_plugin.IMPORT_ENV == {"NBCONVERT_DISABLE_CONFIG_EXPORTERS": "1"}
    assert slow.VALUE == 1 and heavy.imported == ["1"]
    assert "NBCONVERT_DISABLE_CONFIG_EXPORTERS" not in os.environ  # as it was before


def test_a_module_already_imported_is_not_replaced(package):
    import heavy.slow

    assert lesson_plugin.defer("heavy.slow") is heavy.slow


@pytest.mark.slow
def test_loading_the_site_config_imports_neither_nbconvert_nor_jupytext_until_a_notebook_is_converted():
    # A fresh interpreter: this one may have imported them already.
    code = textwrap.dedent("""
        import sys
        from mkdocs.config import load_config
        def imported():  # for real, not a stand-in
            return sorted(m for m in ("nbconvert", "jupytext")
                          if m in sys.modules and type(sys.modules[m]).__name__ != "Deferred")
        config = load_config("mkdocs.yml")
        from mkdocs_jupyter.plugin import Plugin  # after: imported first, it would import both
        plugin = config["plugins"]["bench-notebooks"]
        assert isinstance(plugin, Plugin), type(plugin)
        assert plugin.config["include"] == ["lessons/*.ipynb"] and plugin.config["execute"] is False
        assert "mkdocs-jupyter" not in config["plugins"]  # listed once, under the deferring name
        print(imported())
        from mkdocs_jupyter import plugin as module
        assert callable(module.convert.nb2html)
        print(imported())
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[:2] == ["[]", "['nbconvert']"]
