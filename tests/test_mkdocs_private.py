"""MkDocs' private names are used in one module (benchsite/build/mkdocs_private.py), and pinned
there: an MkDocs upgrade that changes one of them fails here, with its name, before any build
can go wrong quietly."""

import ast
import hashlib
import inspect
import re
from importlib import metadata

import mkdocs
from mkdocs.structure.pages import Page

from benchsite.build import mkdocs_private
from conftest import REPO

# sha256 (first 16 hex digits) of each private object's source, read from the pinned MkDocs.
SOURCES = {
    "mkdocs.commands.build._populate_page": "31a70ea4caef1e12",
    "mkdocs.commands.build._build_theme_template": "628a78f6a129c8a0",
    "mkdocs.structure.pages._ExtractAnchorsTreeprocessor": "95da536fb4b96614",
    "mkdocs.structure.pages._ExtractTitleTreeprocessor": "253a44071bfb0c4a",
    "mkdocs.structure.pages._RawHTMLPreprocessor": "1bc67630834f6212",
    "mkdocs.structure.pages._RelativePathTreeprocessor": "523b46edca9448ef",
    "material.plugins.search.plugin.SearchIndex.__init__": "b75d102d500cf399",
    "material.plugins.search.plugin.SearchIndex.add_entry_from_context": "4ca78ac4321f7704",
}


def test_the_pinned_mkdocs_and_material_are_the_ones_installed_and_required():
    required = (REPO / "requirements.txt").read_text()
    pinned = re.search(r"^mkdocs==(\S+)$", required, re.M).group(1)
    assert mkdocs.__version__ == pinned == mkdocs_private.PINNED
    material = re.search(r"^mkdocs-material==(\S+)$", required, re.M).group(1)
    assert metadata.version("mkdocs-material") == material == mkdocs_private.PINNED_MATERIAL


def test_only_materials_search_index_is_wrapped():
    """The render cache extends Material's ``entries``; MkDocs' own search index has none (a build
    with ``plugins: [search, bench]`` on MkDocs' theme crashed with AttributeError)."""
    from material.plugins.search.plugin import SearchPlugin as MaterialSearch
    from mkdocs.contrib.search import SearchPlugin as MkDocsSearch
    from mkdocs.contrib.search.search_index import SearchIndex as MkDocsIndex

    mkdocs_search = MkDocsSearch()
    mkdocs_search.search_index = MkDocsIndex()
    assert mkdocs_private.material_search_index(mkdocs_search) is None
    material_search = MaterialSearch()
    material_search.search_index = mkdocs_private.MaterialSearchIndex()
    assert mkdocs_private.material_search_index(material_search) is material_search.search_index


def test_each_private_name_is_as_it_was_read():
    """On an MkDocs upgrade: read each changed object, mend mkdocs_private.py, and record the new
    digests here."""
    found = {name: hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()[:16]
             for name, obj in mkdocs_private.USED.items()}
    assert found == SOURCES


def test_what_page_render_sets_is_what_the_render_cache_keeps():
    source = inspect.getsource(Page.render)
    assigned = set(re.findall(r"self\.(\w+)\s*(?::[^=]+)?=", source))
    assert assigned <= mkdocs_private.RENDER_ATTRIBUTES | {"markdown"}, assigned
    assert "_title_from_render" in assigned


def _private_uses(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("mkdocs", "material"):
            found += [f"{path.name}:{node.lineno}: {a.name}" for a in node.names if a.name.startswith("_")]
            if any(part.startswith("_") for part in node.module.split(".")):
                found.append(f"{path.name}:{node.lineno}: {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{path.name}:{node.lineno}: {a.name}" for a in node.names
                      if a.name.split(".")[0] in ("mkdocs", "material") and "._" in a.name]
        elif isinstance(node, ast.Attribute) and node.attr in ("_register", "_title_from_render", "_populate_page",
                                                                "_build_theme_template", "search_index"):
            found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    return found


def test_no_other_module_uses_a_private_name_of_mkdocs_or_material():
    found = [use for path in sorted((REPO / "benchsite").rglob("*.py")) if path.name != "mkdocs_private.py"
             for use in _private_uses(path)]
    assert found == []
    assert _private_uses(REPO / "benchsite" / "build" / "mkdocs_private.py")  # the check sees them there


def test_the_site_has_no_hooks_outside_the_package():
    """The plugin replaced docs/.hooks: mkdocs.yml names no hook file, so everything the build
    runs is in the package, under the import rules."""
    config = (REPO / "mkdocs.yml").read_text()
    assert not re.search(r"^hooks:", config, re.M)
    assert re.search(r"^  - bench$", config, re.M)
    assert not (REPO / "docs" / ".hooks").exists()
