"""The project imports its own code through the editable install (``make venv``), never by editing
``sys.path``: a module that edits it works from one folder and fails, or imports another copy,
from the next."""

from __future__ import annotations

import ast

from conftest import REPO

# The one edit left, and why: the runner is started by an accelerator image's python3, which has
# jax and numpy but no `pip install -e .`, so it falls back to the checkout's own benchsite.
ALLOWED = {"bench_scripts/run.py"}


def path_edits(source: str) -> list[int]:
    """Lines that call ``sys.path.<method>(...)`` or assign to ``sys.path`` (code, not strings:
    a test that starts another interpreter may spell such a line in the program it passes)."""
    def is_sys_path(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "path"
                and isinstance(node.value, ast.Name) and node.value.id == "sys")

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_sys_path(node.func.value):
            lines.append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(is_sys_path(t) or (isinstance(t, ast.Subscript) and is_sys_path(t.value)) for t in targets):
                lines.append(node.lineno)
    return sorted(lines)


def test_the_checker_finds_each_kind_of_edit():
    source = ("import sys\nsys.path.insert(0, 'x')\nsys.path.append('y')\nsys.path = ['z']\n"
              "sys.path[:0] = ['w']\nsys.path += ['v']\ncode = \"sys.path.insert(0, 'u')\"\n")
    assert path_edits(source) == [2, 3, 4, 5, 6]


def test_no_module_edits_sys_path():
    folders = ("benchsite", "bench_scripts", "docs", "tools", "tests")
    found = []
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel not in ALLOWED:
                found += [f"{rel}:{line}" for line in path_edits(path.read_text(encoding="utf-8"))]
    assert found == [], "sys.path edited (import through the install, or pytest's pythonpath for tests)"


def test_the_allowed_edit_is_a_fallback_only():
    """run.py edits sys.path only where importing the installed benchsite failed."""
    source = (REPO / "bench_scripts" / "run.py").read_text(encoding="utf-8")
    handlers = [h for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Try) for h in node.handlers
                if isinstance(h.type, ast.Name) and h.type.id == "ImportError"]
    inside = {n.lineno for h in handlers for n in ast.walk(h) if hasattr(n, "lineno")}
    edits = path_edits(source)
    assert edits and set(edits) <= inside
