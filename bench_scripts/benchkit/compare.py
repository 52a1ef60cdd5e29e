"""``python -m benchkit compare OLD NEW``: two versions of a function, timed paired and
interleaved in the same session, with a verdict block to paste into a review.

A version is ``path/to/file.py:function`` (the file as it is on disk),
``REV:path/to/file.py:function`` (that file at git revision ``REV`` of the current
repository: ``HEAD``, ``main``, a commit) or ``package.module:function`` (imported).
A function that is not jitted yet is wrapped in ``jax.jit``.

Before any timing, every worker checks that both versions compile with the arguments
(``--args``, a Python expression in ``jax``, ``jnp`` and ``np``) and return the same values
(``--rtol``/``--atol``; ``--no-check`` skips the comparison). Then ``--runs`` worker
processes each warm both up and time them interleaved at ``--boundary``. The parent writes
``<results>/<machine>/<name>.csv`` (the site's schema) and ``<name>.compare.json`` beside it
(the command, the margin and each version's source: what the site shows as the code), and
prints the Markdown block of :mod:`benchkit.report`: the second version over the first.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import layout, runner
from .bench import (
    LABEL_RE,
    MIN_SAMPLES_PER_RUN,
    NAME_RE,
    SIDE_FORMAT,
    TIMED_BOUNDARIES,
    BenchError,
    _Cell,
    first_line,
    measure_cells,
    run_processes,
    side_file,
    write_side,
)
from .report import Report
from .results import read_rows, to_csv_text, write_atomic

JSON_FORMAT = SIDE_FORMAT
EXIT_ERROR = 2


@dataclass
class Version:
    """One side of a comparison, resolved by the parent: ``file`` is on disk (a revision's text
    written to a temporary folder) or None for an imported module."""

    label: str
    target: str  # as the user wrote it
    revision: str  # "" for a file as it is on disk or a module
    path: str  # shown and recorded: repository-relative where possible
    function: str
    source: str
    file: Path | None = None
    module: str = ""
    origin: Path | None = None  # a module's file

    def spec(self) -> str:
        """How a worker finds it: ``file:<path>:<function>`` or ``module:<name>:<function>``."""
        return f"file:{self.file}:{self.function}" if self.file else f"module:{self.module}:{self.function}"


def _git(repo: Path | None, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(repo or Path.cwd()), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as err:
        raise BenchError(f"git {' '.join(args)}: {err}") from None
    if out.returncode != 0:
        raise BenchError(f"git {' '.join(args)}: {out.stderr.strip() or 'failed'}")
    return out.stdout


def resolve(target: str, label: str, scratch: Path, repo: Path | None) -> Version:
    """A version as the user wrote it, resolved to something a worker can load."""
    parts = target.split(":")
    if len(parts) == 3:
        rev, path, function = parts
        root = layout.find_repo() if repo is None else repo
        if root is None:
            raise BenchError(f"{target}: a revision needs a git repository (the current folder is in none)")
        file = (Path.cwd() / path).resolve()
        if not file.is_relative_to(root.resolve()):
            raise BenchError(f"{target}: {path} is not inside the git repository {root}")
        rel = file.relative_to(root.resolve()).as_posix()
        source = _git(root, "show", f"{rev}:{rel}")
        defined(source, function, target)
        commit = _git(root, "rev-parse", "--short=12", rev).strip()
        folder = scratch / f"{label}-{commit}"
        folder.mkdir(parents=True, exist_ok=True)
        file = folder / Path(rel).name
        file.write_text(source, encoding="utf-8")
        return Version(label, target, rev, rel, function, source, file=file)
    if len(parts) != 2 or not all(parts):
        raise BenchError(f"{target!r}: a version is FILE.py:FUNCTION, REV:FILE.py:FUNCTION or MODULE:FUNCTION")
    where, function = parts
    if where.endswith(".py"):
        file = Path(where).resolve()
        if not file.is_file():
            raise BenchError(f"{target}: no such file {where}")
        defined(file.read_text(encoding="utf-8"), function, target)
        root = repo or layout.find_repo(file.parent)
        shown = file.relative_to(root.resolve()).as_posix() if root and file.is_relative_to(root.resolve()) else where
        return Version(label, target, "", shown, function, file.read_text(encoding="utf-8"), file=file)
    try:
        spec = importlib.util.find_spec(where)
    except (ImportError, ValueError) as err:
        raise BenchError(f"{target}: cannot find module {where}: {err}") from None
    if spec is None:
        raise BenchError(f"{target}: no module named {where}")
    origin = Path(spec.origin) if spec.origin and spec.origin.endswith(".py") else None
    source = origin.read_text(encoding="utf-8") if origin else ""
    return Version(label, target, "", where, function, source, module=where, origin=origin)


def defined(source: str, function: str, target: str) -> None:
    """Refuse at once (before any worker starts) a file that defines no top-level ``function``;
    the message lists what it does define. A file that does not parse is left to the worker."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    names += [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
    imported = [a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom | ast.Import) for a in n.names]
    if function not in names + imported:
        have = ", ".join(n for n in names if not n.startswith("_")) or "nothing"
        raise BenchError(f"{target}: the file defines no {function} (it defines: {have})")


def load(spec: str, label: str) -> Any:
    """The function a worker times, from :meth:`Version.spec`; jitted if it is not already."""
    import jax

    kind, where, function = spec.split(":", 2) if spec.count(":") >= 2 else ("", "", "")
    try:
        if kind == "file":
            mod_spec = importlib.util.spec_from_file_location(f"_benchkit_version_{label.replace('-', '_')}", where)
            module = importlib.util.module_from_spec(mod_spec)
            mod_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except Exception as err:
        raise BenchError(f"`{label}`: importing {where} failed: {type(err).__name__}: {err}") from None
    fn = getattr(module, function, None)
    if not callable(fn):
        raise BenchError(f"`{label}`: {where} has no function {function}")
    return fn if hasattr(fn, "lower") else jax.jit(fn)


def example_args(expr: str) -> tuple:
    """``--args``: a Python expression in ``jax``, ``jnp`` and ``np``; a tuple is the arguments."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    try:
        value = eval(expr, {"jax": jax, "jnp": jnp, "np": np})  # the user's own expression, in their shell
    except Exception as err:
        raise BenchError(f"--args {expr!r}: {type(err).__name__}: {err}") from None
    return value if isinstance(value, tuple) else (value,)


def check_versions(fns: list[Any], labels: list[str], args: tuple, *, rtol: float, atol: float,
                   compare_values: bool) -> list[Any]:
    """Each version compiles for these arguments and runs; with ``compare_values`` the later
    ones return the first one's values (same tree, shapes and numbers within tolerance)."""
    import jax
    import numpy as np

    outs = []
    for fn, label in zip(fns, labels):
        try:  # the Python function runs here, on abstract values: its own errors show up now
            traced = fn.trace(*args)
        except Exception as err:
            raise BenchError(f"`{label}` fails for these arguments (while being traced): "
                             f"{type(err).__name__}: {first_line(err)}") from None
        try:
            compiled = traced.lower().compile()
        except Exception as err:
            raise BenchError(f"`{label}` does not compile for these arguments: {type(err).__name__}: "
                             f"{first_line(err)}") from None
        try:
            outs.append(jax.block_until_ready(compiled(*args)))
        except Exception as err:
            raise BenchError(f"`{label}` failed when run: {type(err).__name__}: {first_line(err)}") from None
    if compare_values:
        first, tree = jax.tree_util.tree_flatten(outs[0])
        for out, label in zip(outs[1:], labels[1:]):
            leaves, other = jax.tree_util.tree_flatten(out)
            if other != tree:
                raise BenchError(f"`{label}` returns {other}, `{labels[0]}` returns {tree}: not the same output")
            for i, (x, y) in enumerate(zip(leaves, first)):
                x, y = np.asarray(x), np.asarray(y)
                if x.shape != y.shape or not np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol,
                                                         atol=atol, equal_nan=True):
                    worst = (float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))
                             if x.shape == y.shape else float("nan"))
                    raise BenchError(f"`{label}` returns different values from `{labels[0]}` (output {i}: shape "
                                     f"{x.shape} vs {y.shape}, largest difference {worst:.3g}; rtol={rtol}, "
                                     f"atol={atol}); use --no-check to time them anyway")
    return outs


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchkit compare", description=__doc__.split("\n\n")[0])
    p.add_argument("old", help="the baseline: FILE.py:FUNCTION, REV:FILE.py:FUNCTION or MODULE:FUNCTION")
    p.add_argument("new", help="the candidate, in the same forms")
    p.add_argument("--args", default="()", help="the arguments, a Python expression in jax, jnp and np "
                   "(a tuple for several), e.g. \"jnp.ones((1024, 1024))\"")
    p.add_argument("--boundary", default="completed", choices=TIMED_BOUNDARIES)
    p.add_argument("--runs", type=int, default=runner.DEFAULT_RUNS, help="worker processes (default %(default)s)")
    p.add_argument("--margin", type=float, default=0.10, help="equivalence margin (default 0.10: ±10 %%)")
    p.add_argument("--min-samples", type=int, default=MIN_SAMPLES_PER_RUN,
                   help="samples per version and run, at least (default %(default)s)")
    p.add_argument("--names", default="a,b", help="the two versions' labels (default a,b)")
    p.add_argument("--name", default="", help="the results file's name (default compare_<functions>)")
    p.add_argument("--results", type=Path, help="results root (default: results/ at the top of this git work tree)")
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--atol", type=float, default=1e-6)
    p.add_argument("--no-check", action="store_true", help="do not compare the two versions' outputs")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    # Set by the parent on each worker's command line.
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--load", action="append", default=[], help=argparse.SUPPRESS)
    p.add_argument("--run-index", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--session", default="", help=argparse.SUPPRESS)
    p.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--repo", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--script", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--script-path", default="", help=argparse.SUPPRESS)
    p.add_argument("--script-sha256", default="", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _labels(text: str) -> list[str]:
    labels = [x.strip() for x in text.split(",")]
    if len(labels) != 2 or labels[0] == labels[1] or not all(LABEL_RE.fullmatch(x) for x in labels):
        raise BenchError(f"--names {text!r}: two different labels of lower-case letters, digits, '.', '_', '-'")
    return labels


def default_name(old: Version, new: Version) -> str:
    parts = [old.function] if old.function == new.function else [old.function, new.function]
    slug = re.sub(r"[^a-z0-9_]+", "_", "_".join(parts).lower()).strip("_")
    return f"compare_{slug}"[:60].rstrip("_")


def work(args: argparse.Namespace) -> int:
    """A worker: load both versions, check them, time them interleaved, write the rows."""
    labels = _labels(args.names)
    fns = [load(spec, label) for spec, label in zip(args.load, labels)]
    call_args = example_args(args.args)
    check_versions(fns, labels, call_args, rtol=args.rtol, atol=args.atol, compare_values=not args.no_check)
    cells = [_Cell(label, fn, call_args, args.boundary, minimum=args.min_samples) for label, fn in zip(labels, fns)]
    rows = measure_cells(cells, args.script, args.name, args)
    for row in rows:  # the recorded script is the baseline's file as given (a revision's text is in the json)
        row["script_path"] = args.script_path
        row["script_sha256"] = args.script_sha256
    write_atomic(args.out, to_csv_text(rows))
    return 0


def main(argv: list[str]) -> int:
    try:
        args = _parse(argv)
        if args.worker:
            return work(args)
        return orchestrate(args, argv)
    except BenchError as err:  # a worker's message is quoted by the parent, which adds the prefix
        print(err if "--worker" in argv else f"benchkit compare: {err}", file=sys.stderr)
        return EXIT_ERROR


def orchestrate(args: argparse.Namespace, argv: list[str]) -> int:
    labels = _labels(args.names)
    if args.runs < 1:
        raise BenchError(f"--runs must be at least 1, not {args.runs}")
    if args.min_samples < 1:
        raise BenchError(f"--min-samples must be at least 1, not {args.min_samples}")
    from . import verdicts

    try:
        verdicts.check_margin(args.margin)
    except ValueError as err:
        raise BenchError(f"--margin: {err}") from None
    repo = layout.find_repo()
    results = args.results or layout.default_results()
    with tempfile.TemporaryDirectory(prefix="benchkit-compare-") as tmp:
        versions = [resolve(t, label, Path(tmp), repo) for t, label in zip((args.old, args.new), labels)]
        name = args.name or default_name(*versions)
        if not NAME_RE.fullmatch(name):
            raise BenchError(f"--name {name!r}: lower-case letters, digits and '_', starting with a letter")
        figure = results.resolve().parent / layout.BENCH_DIR_NAME / f"{name}.py"
        if figure.is_file():
            raise BenchError(f"--name {name}: {figure} is a figure script, whose results file that is; "
                             "choose another name")
        script = versions[0].file or versions[0].origin
        if script is None:
            raise BenchError(f"{args.old}: {versions[0].path} has no Python source file to record")
        sha = hashlib.sha256(versions[0].source.encode()).hexdigest()
        base = [a for a in argv if a not in ("--quiet",)]

        def command(run: int, out: Path, seed: int, session: str) -> list[str]:
            loads = [x for v in versions for x in ("--load", v.spec())]
            return [sys.executable, "-m", "benchkit", "compare", *base, "--worker", *loads, "--name", name,
                    "--run-index", str(run), "--seed", str(seed), "--session", session, "--out", str(out),
                    "--script", str(script), "--script-path", versions[0].path, "--script-sha256", sha] + (
                        ["--repo", str(repo)] if repo else [])
        if not args.quiet:
            print(f"benchkit compare: `{labels[0]}` = {args.old}, `{labels[1]}` = {args.new}; "
                  f"{args.runs} runs at the {args.boundary} boundary", file=sys.stderr)
        path = run_processes(name, command, args.runs, results, quiet=args.quiet)
    side = side_file(path)
    ratio = [labels[1], labels[0]]
    record = {"format": JSON_FORMAT, "made_by": "benchkit compare",
              "title": f"{versions[1].target} against {versions[0].target}",
              "command": "python -m benchkit compare " + shlex.join(argv), "boundary": args.boundary,
              "margin": args.margin, "args": args.args, "ratio": ratio,
              "versions": [{"variant": v.label, "target": v.target, "revision": v.revision, "path": v.path,
                            "sha256": hashlib.sha256(v.source.encode()).hexdigest(), "source": v.source}
                           for v in versions]}
    write_side(side, record)
    found = Report.from_rows(read_rows(path), path, margin=args.margin, baseline=labels[0], order=labels)
    print(found.markdown())
    print(f"\nwrote {path} and {side}", file=sys.stderr)
    return 0
