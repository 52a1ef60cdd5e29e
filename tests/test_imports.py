"""The project imports its own code through the editable install (``make venv``), never by editing
``sys.path``: a module that edits it works from one folder and fails, or imports another copy,
from the next."""

from __future__ import annotations

import ast
import functools
import json
import sys
from pathlib import Path

import pytest

from conftest import REPO

# The edits left, and why each is one:
ALLOWED = {
    # The lesson runs in whatever Jupyter a reader starts inside the repository (or with
    # BENCH_REPO), not only in the project's venv: its first cell finds the harness and helpers.
    "docs/lessons/benchmark-async-work.ipynb",
}


@functools.cache
def _parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, once a process for each text: the checks below read the
    same modules several times (the layer graph alone was parsed three times, and each file twice
    for its imports). The trees are only read, never changed."""
    return ast.parse(source, filename=filename)


def _parsed(path: Path) -> ast.Module:
    """``path``'s module as it is now (its text read each time: a test may write the file)."""
    return _parse(path.read_text(encoding="utf-8"), str(path))


def path_edits(source: str) -> list[int]:
    """Lines that change ``sys.path``: a call of one of its methods, an assignment, augmented
    assignment or ``del`` of it or an item of it, or ``setattr(sys, "path", ...)``; through
    ``import sys``, ``import sys as s`` or ``from sys import path as p``. Code, not strings: a
    test that starts another interpreter may spell such a line in the program it passes."""
    tree = _parse(source)
    modules, paths = {"sys"}, set()  # names bound to the sys module, and to sys.path itself
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "sys"}
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            paths |= {a.asname or a.name for a in node.names if a.name == "path"}

    def is_path(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript):
            return is_path(node.value)
        if isinstance(node, ast.Name):
            return node.id in paths
        return (isinstance(node, ast.Attribute) and node.attr == "path"
                and isinstance(node.value, ast.Name) and node.value.id in modules)

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and is_path(func.value):
                lines.append(node.lineno)
            elif (isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args
                  and isinstance(node.args[0], ast.Name) and node.args[0].id in modules
                  and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "path"):
                lines.append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(is_path(t) for t in targets):
                lines.append(node.lineno)
    return sorted(set(lines))


def notebook_code(path) -> str:
    """A notebook's code cells as one program (IPython magics and shell lines left out)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return "\n".join(line for cell in code for line in cell.splitlines() if not line.lstrip().startswith(("%", "!")))


def test_the_checker_finds_each_kind_of_edit():
    source = ("import sys\nsys.path.insert(0, 'x')\nsys.path.append('y')\nsys.path = ['z']\n"
              "sys.path[:0] = ['w']\nsys.path += ['v']\ncode = \"sys.path.insert(0, 'u')\"\n")
    assert path_edits(source) == [2, 3, 4, 5, 6]
    aliased = ("import sys as _s\n_s.path.insert(0, 'a')\nfrom sys import path as _p\n_p.append('b')\n"
               "setattr(_s, 'path', [])\ndel _s.path[0]\n_p[:] = []\nprint(_s.argv, len(_p))\n")
    assert path_edits(aliased) == [2, 4, 5, 6, 7]


def test_no_module_or_notebook_edits_sys_path():
    found = []
    for folder in ("benchsite", "bench_scripts", "docs", "tools", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")) + sorted((REPO / folder).rglob("*.ipynb")):
            rel = path.relative_to(REPO).as_posix()
            if rel in ALLOWED or ".ipynb_checkpoints" in rel:
                continue
            source = notebook_code(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
            found += [f"{rel}:{line}" for line in path_edits(source)]
    assert found == [], "sys.path edited (import through the install, or pytest's pythonpath for tests)"


def test_each_allowed_file_still_has_the_edit_it_is_allowed():
    """An entry that no longer edits anything is a stale exception: remove it."""
    for rel in sorted(ALLOWED):
        path = REPO / rel
        source = notebook_code(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
        assert path_edits(source), rel


def _absolute_imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every absolute import in a file, at any depth."""
    found = []
    tree = _parsed(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    found += [(line, target.split(".")[0]) for line, target, _ in dynamic_imports(tree) if target]
    return found


def test_the_measuring_side_never_imports_the_publishing_side():
    """Nothing under bench_scripts/ (benchkit, the figure scripts, the runner) imports benchsite:
    an accelerator image measures with jax and numpy alone, and benchkit installs on its own."""
    found = [f"{p.relative_to(REPO)}:{line}" for p in sorted((REPO / "bench_scripts").rglob("*.py"))
             for line, top in _absolute_imports(p) if top == "benchsite"]
    assert found == []


def test_benchkit_needs_only_jax_numpy_and_the_standard_library():
    """What its pyproject.toml promises: every import of benchkit's modules is the standard
    library, jax, numpy or benchkit itself."""
    allowed = set(sys.stdlib_module_names) | {"jax", "jaxlib", "numpy", "benchkit"}
    found = [f"{p.relative_to(REPO)}:{line}: {top}" for p in sorted((REPO / "bench_scripts" / "benchkit").rglob("*.py"))
             for line, top in _absolute_imports(p) if top not in allowed]
    assert found == []


def test_every_data_file_of_the_packages_is_declared_for_an_install():
    """A wheel or a plain ``pip install .`` carries a package's modules and only the data files that
    pyproject.toml names; the editable install reads the checkout and would never show one missing
    (``figure.md`` and ``peaks.csv`` were, once). Each file under a package that is not a module
    must match a package-data pattern (a path relative to that package's folder)."""
    import fnmatch
    import tomllib

    setup = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    roots = {name: REPO / folder for name, folder in setup["package-dir"].items()}

    def folder(package: str) -> Path:
        top, *rest = package.split(".")
        return roots.get(top, REPO / top).joinpath(*rest)

    declared = {folder(p): setup.get("package-data", {}).get(p, []) for p in setup["packages"]}
    undeclared = []
    for top in {folder(p.split(".")[0]) for p in setup["packages"]}:
        for path in sorted(top.rglob("*")):
            if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            if not any(path.is_relative_to(base) and fnmatch.fnmatch(path.relative_to(base).as_posix(), pattern)
                       for base, patterns in declared.items() for pattern in patterns):
                undeclared.append(str(path.relative_to(REPO)))
    assert not undeclared, f"data files a plain install would leave out (pyproject.toml package-data): {undeclared}"


def _typing_guard(test: ast.expr, tree: ast.AST | None = None) -> bool:
    """``if TYPE_CHECKING:`` with typing's own flag: ``typing.TYPE_CHECKING``, or the bare name
    when it is imported from typing and never assigned in the module."""
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING" and ast.unparse(test.value) == "typing"
    if not (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"):
        return False
    if tree is None:
        return True
    nodes = list(ast.walk(tree))
    imported = any(isinstance(n, ast.ImportFrom) and n.module == "typing" and
                   any(a.name == "TYPE_CHECKING" and a.asname in (None, "TYPE_CHECKING") for a in n.names)
                   for n in nodes)
    assigned = any(isinstance(n, ast.Name) and n.id == "TYPE_CHECKING" and isinstance(n.ctx, ast.Store)
                   for n in nodes)
    return imported and not assigned


def _imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports when it runs, top-level or inside a function:
    ``from . import x``, ``from .x import y``, ``from benchsite import x``, ``from benchsite.x
    import y``, ``import benchsite.x``; not those in the body of ``if TYPE_CHECKING:``."""
    tree = _parsed(path)
    typing_only = {id(sub) for node in ast.walk(tree) if isinstance(node, ast.If) and _typing_guard(node.test)
                   for stmt in node.body for sub in ast.walk(stmt)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        absolute = isinstance(node, ast.ImportFrom) and node.level == 0 and \
            (node.module or "").split(".")[0] == "benchsite"
        if isinstance(node, ast.ImportFrom) and (node.level == 1 or absolute):
            inside = (node.module or "").removeprefix("benchsite").lstrip(".") if absolute else (node.module or "")
            names = [inside] if inside else [a.name for a in node.names]
            found |= {n.split(".")[0] for n in names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("benchsite.")}
    return (found & modules) - {path.stem}


def _graph() -> dict[str, set[str]]:
    """benchsite's modules by their place below the package (``model.load``), each with the
    modules of the package it imports, deferred imports too, not those in the body of ``if
    TYPE_CHECKING:`` (an import of a layer's package, ``from benchsite.model import load``, counts
    as its module). Made once a process for each package as it is now (its modules' names and
    texts, read each time): three tests read the checkout's; a copy of it each."""
    package = REPO / "benchsite"
    names = {".".join(p.relative_to(package).with_suffix("").parts): p for p in package.rglob("*.py")
             if p.name != "__init__.py"}
    texts = tuple(sorted((name, path.read_text(encoding="utf-8")) for name, path in names.items()))
    return {name: set(targets) for name, targets in _graph_of(str(package), texts).items()}


@functools.cache
def _graph_of(package: str, texts: tuple[tuple[str, str], ...]) -> dict[str, set[str]]:
    """:func:`_graph` of the modules ``texts`` names (their text), in the folder ``package``."""
    names = {name: Path(package, *name.split(".")).with_suffix(".py") for name, _ in texts}
    sources = dict(texts)
    graph = {}
    for name, path in names.items():
        found, tree = set(), _parse(sources[name], str(path))
        typing_only = {id(sub) for node in ast.walk(tree)
                       if isinstance(node, ast.If) and _typing_guard(node.test, tree)
                       for stmt in node.body for sub in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.level >= 1:
                # ``from .x``, ``from ..views import fmt``: each dot past the first goes up a package
                parents = name.split(".")[:-1]
                parents = parents[:len(parents) - (node.level - 1)] if node.level - 1 <= len(parents) else []
                base = ".".join(filter(None, [*parents, node.module or ""]))
                found |= {f"{base}.{a.name}".lstrip(".") for a in node.names} | {base}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "benchsite":
                base = node.module.removeprefix("benchsite").lstrip(".")
                found |= {f"{base}.{a.name}".lstrip(".") for a in node.names} | {base}
            elif isinstance(node, ast.Import):
                found |= {a.name.removeprefix("benchsite.") for a in node.names if a.name.startswith("benchsite.")}
        # A whole layer imported as a package (``from benchsite import views``, ``from .. import
        # views``, ``import benchsite.views``) counts as an import of that layer: its ``__init__``.
        graph[name] = (found & set(names)) - {name} | {f"{f}.__init__" for f in found if f in LAYERS}
        # So does a module named in a string: to importlib, __import__ or pkgutil.resolve_name, or
        # looked up in sys.modules; and ``benchsite.views.fmt`` reached as an attribute after
        # ``import benchsite``. A name built at run time is reported: the graph could not see it.
        for line, target, call in dynamic_imports(tree):
            if target is None:
                if f"{name}: {call}" not in DYNAMIC_ALLOWED:
                    graph[name] |= {f"?{name}:{line}: {call}"}
            elif target.startswith("benchsite.") and target.split(".")[1] in LAYERS:
                parts = target.removeprefix("benchsite.").split(".")
                prefixes = [".".join(parts[:n]) for n in range(len(parts), 0, -1)]
                module = next((m for m in prefixes if m in names), f"{parts[0]}.__init__")
                graph[name] |= {module} - {name}
    return graph


IMPORTERS = {"__import__", "import_module", "resolve_name"}


def dynamic_imports(tree: ast.AST) -> list[tuple[int, str | None, str]]:
    """(line, the absolute module name or None when built at run time, the code) for each import a
    ``from``/``import`` statement does not show: ``importlib.import_module(name[, package])`` under
    any name it is bound to, ``__import__``/``builtins.__import__``, ``pkgutil.resolve_name``,
    ``sys.modules[name]``, and an attribute chain from ``benchsite`` itself."""
    found = []
    importers = IMPORTERS | {a.asname for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                             for a in n.names if a.name in IMPORTERS and a.asname}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (getattr(node.func, "id", None) in importers
                                           or getattr(node.func, "attr", None) in IMPORTERS):
            args = [*node.args, *(k.value for k in node.keywords if k.arg in ("name", "package"))]
            if not args or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args[:2]):
                found.append((node.lineno, None, ast.unparse(node)))
                continue
            target = args[0].value.split(":")[0]
            if target.startswith(".") and len(args) > 1:  # import_module('.fmt', 'benchsite.views')
                package = args[1].value.split(".")
                dots = len(target) - len(target.lstrip("."))
                target = ".".join([*package[:len(package) - dots + 1], target.lstrip(".")])
            found.append((node.lineno, target, ast.unparse(node)))
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "sys.modules":
            key = node.slice
            found.append((node.lineno, key.value if isinstance(key, ast.Constant) and isinstance(key.value, str)
                          else None, ast.unparse(node)))
        elif isinstance(node, ast.Attribute) and ast.unparse(node).startswith("benchsite.") \
                and isinstance(node.value, ast.Name) and node.value.id == "benchsite":
            found.append((node.lineno, f"benchsite.{node.attr}", ast.unparse(node)))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and ast.unparse(node).startswith("benchsite.") and isinstance(node.value.value, ast.Name) \
                and node.value.value.id == "benchsite":
            found.append((node.lineno, f"benchsite.{node.value.attr}.{node.attr}", ast.unparse(node)))
    return found


# Imports by a name built at run time, each checked by hand (module: the call as written): the
# lesson plugin's stand-in imports mkdocs-jupyter's own modules (its own ``__name__`` and parent,
# and swaps them in sys.modules),
# never one of benchsite's; the docs reader looks a recorded function up again in the module it
# came from (already imported by whoever handed the function over), to check it is a named one.
DYNAMIC_ALLOWED = {"build.lesson_plugin: importlib.import_module(self.__name__)",
                   "build.lesson_plugin: importlib.import_module(parent)",
                   "build.lesson_plugin: sys.modules[self.__name__]",
                   "build.lesson_plugin: sys.modules[name]",
                   "pages.docsread: importlib.import_module(module)"}


def test_the_import_graph_sees_every_form_of_import(tmp_path):
    """The graph the next two tests walk: a relative, an absolute and a deferred import each count;
    only the body of ``if TYPE_CHECKING:`` does not."""
    path = tmp_path / "mod.py"
    path.write_text("from typing import TYPE_CHECKING\nfrom . import a\nfrom .b import x\n"
                    "from benchsite import c\nfrom benchsite.d import y\nimport benchsite.e\n"
                    "def f():\n    from . import g\n"
                    "if TYPE_CHECKING:\n    from . import h\nelse:\n    from . import i\n"
                    "if not TYPE_CHECKING:\n    from . import j\n")
    assert _imports_of(path, set("abcdefghij")) == set("abcdegij")


# The layers, lowest first: a module may import its own layer and those below it (CONTRIBUTING.md
# draws them). A model module never reaches a view, a view never a page, nothing but the build the
# build; the core is what every layer stands on.
LAYERS = ("core", "model", "views", "pages", "build")
# Imports that go up (CONTRIBUTING.md would name them): none today. A module that needs something
# of a higher layer is handed it (pages.markers.Context.cache: the build's BuildCache, which the
# pages know as the Blocks protocol). The list only shrinks: an entry that no longer holds fails
# the test too.
UPWARD: set[tuple[str, str]] = set()


def test_every_module_of_benchsite_is_in_a_layer():
    package = REPO / "benchsite"
    loose = sorted(p.name for p in package.glob("*.py") if p.name != "__init__.py")
    folders = sorted(p.name for p in package.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert loose == [] and folders == sorted(LAYERS)
    assert all((package / layer / "__init__.py").is_file() for layer in LAYERS)


def test_each_layer_imports_only_the_layers_below_it():
    """Every import of every module, deferred ones too, goes to its own layer or one below; the
    upward ones are exactly UPWARD (a new one fails, and so does a mended one left on the list)."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    graph = _graph()
    unseen = sorted(n for targets in graph.values() for n in targets if n.startswith("?"))
    assert not unseen, f"imports by a name the graph cannot read (module:line): {unseen}"
    upward = {(m, n) for m, targets in graph.items() for n in targets
              if rank[n.split(".")[0]] > rank[m.split(".")[0]]}
    assert upward == UPWARD


# MkDocs, Material and Markdown belong to the build layer; below it, none today (pages.chapter_title
# splits a chapter's front matter by mkdocs' rule without importing it). The list only shrinks.
MKDOCS_BELOW_BUILD: set[str] = set()


def test_only_the_build_layer_imports_mkdocs():
    package = REPO / "benchsite"
    found = {f"{'.'.join(p.relative_to(package).with_suffix('').parts)}: {top}"
             for p in sorted(package.rglob("*.py")) if p.relative_to(package).parts[0] not in ("build",)
             for _, top in _absolute_imports(p) if top in ("mkdocs", "material", "markdown", "pymdownx")}
    assert found == MKDOCS_BELOW_BUILD


def test_the_layer_graph_sees_each_form_of_absolute_import():
    graph = _graph()
    assert {"core.cachefile", "model.load", "views.render", "pages.markers", "build.parallel"} <= set(graph)
    assert "core.cachefile" in graph["model.load"]  # from benchsite.core import cachefile
    assert "model.table" in graph["views.render"]  # from benchsite.model.table import Table


@pytest.fixture
def scratch_package(tmp_path, monkeypatch) -> Path:
    """A benchsite of two layers, model and views (views/fmt.py), that _graph reads instead of the
    checkout's: a test writes model modules into it."""
    package = tmp_path / "benchsite"
    for layer in ("model", "views"):
        (package / layer).mkdir(parents=True)
        (package / layer / "__init__.py").write_text("")
    (package / "views" / "fmt.py").write_text("")
    monkeypatch.setattr(__import__(__name__), "REPO", tmp_path)
    return package


def test_the_layer_graph_sees_a_relative_import_across_layers(scratch_package):
    """``from ..views import fmt`` in a model module is an import of views.fmt, deferred or not."""
    package = scratch_package
    (package / "model" / "stats.py").write_text("def f():\n    from ..views import fmt\n")
    (package / "model" / "load.py").write_text("from .. import views\nfrom ..views.fmt import x\n")
    graph = _graph()
    # importing from a package runs its __init__ too: the layer's package counts as imported
    assert graph["model.stats"] == graph["model.load"] == {"views.fmt", "views.__init__"}


def test_the_layer_graph_sees_a_layer_imported_whole_or_by_name(scratch_package):
    """``from benchsite import views`` and ``importlib.import_module("benchsite.views.fmt")`` in a
    model module go up a layer; ``import_module(name)`` with a name made at run time is reported."""
    package = scratch_package
    (package / "model" / "a.py").write_text("from benchsite import views\nimport benchsite.views\n")
    (package / "model" / "b.py").write_text("import importlib\nimportlib.import_module('benchsite.views.fmt')\n")
    (package / "model" / "c.py").write_text("def f(n):\n    return __import__(n)\n")
    forms = {"d": "from importlib import import_module as im\nim('benchsite.views.fmt')\n",
             "e": "import importlib\nimportlib.import_module('.fmt', 'benchsite.views')\n",
             "f": "import builtins\nbuiltins.__import__('benchsite.views.fmt')\n",
             "g": "import pkgutil\npkgutil.resolve_name('benchsite.views.fmt:x')\n",
             "h": "import benchsite\nbenchsite.views.fmt.x\n",
             "i": "import sys\nsys.modules['benchsite.views.fmt']\n",
             "j": "TYPE_CHECKING = True\nif TYPE_CHECKING:\n    from ..views import fmt\n"}
    for stem, text in forms.items():
        (package / "model" / f"{stem}.py").write_text(text)
    graph = _graph()
    assert graph["model.a"] == {"views.__init__"}
    assert graph["model.b"] == {"views.fmt"}
    assert graph["model.c"] == {"?model.c:2: __import__(n)"}
    for stem in forms:
        assert "views.fmt" in graph[f"model.{stem}"], (stem, graph[f"model.{stem}"])
    # and the MkDocs rule sees MkDocs named to importlib or __import__
    (package / "model" / "k.py").write_text("import importlib\nimportlib.import_module('mkdocs.utils')\n"
                                            "__import__('markdown')\n")
    assert {top for _, top in _absolute_imports(package / "model" / "k.py")} >= {"mkdocs", "markdown"}


def test_the_sites_modules_import_one_way():
    """No module of benchsite imports, at any time, one that imports it back, directly or
    through others: the model (load, catalog, table, stats) never reaches up to the views that
    format it (render, pages, markers, history), as CONTRIBUTING's walk says. Where a module
    once imported another inside a function to dodge such a loop, the shared piece moved down
    (urls.py, claim_syntax.py, archive.kept_files, buildcache.cached)."""
    graph = _graph()
    modules = set(graph)

    def reaches(start: str, goal: str) -> list[str] | None:
        todo, seen = [[start]], {start}
        while todo:
            path = todo.pop()
            for nxt in sorted(graph.get(path[-1], ())):
                if nxt == goal:
                    return path + [nxt]
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(path + [nxt])
        return None

    loops = sorted({" -> ".join([m, *loop]) for m in modules for n in graph[m] if (loop := reaches(n, m))})
    assert not loops, f"import loops: {loops}"


def test_figure_scripts_use_only_benchkits_public_api():
    """The site uses benchkit as any user would: a figure script imports names benchkit exports
    (``benchkit.__all__``) or its public modules (compiles, multiproc, profiles, verdicts), never
    a module of the harness's insides (figure, timing, runner, layout, ...)."""
    import benchkit
    from benchkit.layout import figure_scripts

    public_modules = {"compiles", "multiproc", "profiles", "verdicts"}
    found = []
    for path in figure_scripts(REPO / "bench_scripts"):
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("benchkit"):
                inside = node.module.removeprefix("benchkit").lstrip(".")
                if inside in public_modules:
                    continue
                if inside or any(a.name not in benchkit.__all__ for a in node.names):
                    found.append(f"{path.name}:{node.lineno}: from {node.module} import "
                                 f"{', '.join(a.name for a in node.names)}")
            elif isinstance(node, ast.Import) and any(a.name.startswith("benchkit.") and
                                                      a.name.split(".")[1] not in public_modules for a in node.names):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_the_harness_digest_covers_every_module_a_figures_measuring_imports():
    """provenance.HARNESS_MODULES is what harness_sha256 digests (a change there makes every figure
    stale). A harness module may import only harness modules, so what is left out (Bench, compare,
    the report, the verdicts, archive, the exports) cannot change how a figure measures."""
    from benchkit.provenance import HARNESS_MODULES

    package = REPO / "bench_scripts" / "benchkit"
    modules = {p.stem for p in package.glob("*.py")}
    assert set(HARNESS_MODULES) <= modules
    outside = modules - set(HARNESS_MODULES)
    found = [f"{name}.py imports {sorted(_imports_of(package / f'{name}.py', outside))}"
             for name in HARNESS_MODULES if _imports_of(package / f"{name}.py", outside)]
    assert found == []


def test_every_package_folder_is_declared_for_an_install():
    """pyproject.toml lists benchsite's packages by hand; a plain ``pip install .`` or a wheel
    leaves out a subpackage it does not name, modules and all, which the editable install never
    shows. Each folder under benchsite holding a module must be listed."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    package = REPO / "benchsite"
    found = {".".join(("benchsite", *p.parent.relative_to(package).parts)) for p in package.rglob("*.py")
             if "__pycache__" not in p.parts}
    assert found <= listed, f"packages a plain install would leave out (pyproject.toml): {sorted(found - listed)}"
