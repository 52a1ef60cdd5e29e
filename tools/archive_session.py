"""Keep the sessions that results/<machine>/<stem>.csv hold under results/<machine>/sessions/.

``make bench`` does this by itself just before it replaces a file (``bench_scripts/run.py``);
this does it on demand: for the files as they are now, or, with ``--git REV``, for the files
as a commit had them (a session replaced before sessions were kept; git is only read).
An archive that exists already is skipped, so running it twice changes nothing.

    .venv/bin/python tools/archive_session.py                       # every machine, every figure
    .venv/bin/python tools/archive_session.py --machine cpu-... --only dtype_cost
    .venv/bin/python tools/archive_session.py --git 8f0e026         # the session committed there
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit import archive, layout
from benchsite import REPO, RESULTS_DIR


def files_at(rev: str, workdir: Path) -> list[Path]:
    """Every ``results/<machine>/<stem>.csv`` of this checkout as commit ``rev`` had it, copied into ``workdir``."""
    repo, prefix = REPO, RESULTS_DIR.relative_to(REPO).as_posix()
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "--", prefix], cwd=repo,
                           capture_output=True, text=True, check=True).stdout.split()
    out = []
    for name in names:
        parts = Path(name).relative_to(prefix).parts
        if len(parts) != 2 or not parts[1].endswith(layout.CSV_SUFFIX):
            continue
        target = workdir / parts[0] / parts[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(subprocess.run(["git", "show", f"{rev}:{name}"], cwd=repo, capture_output=True,
                                          check=True).stdout)
        out.append(target)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/archive_session.py", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="results folder (default: results/)")
    parser.add_argument("--machine", action="append", help="only this machine folder (repeatable)")
    parser.add_argument("--only", nargs="*", help="only these figure stems")
    parser.add_argument("--git", metavar="REV", help="archive the results files as commit REV had them")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = files_at(args.git, Path(tmp)) if args.git else \
            [f.path for f in layout.discover(args.results)]
        failed, total = 0, 0
        for path in paths:
            machine, stem = path.parent.name, path.name.removesuffix(layout.CSV_SUFFIX)
            if (args.machine and machine not in args.machine) or (args.only and stem not in args.only):
                continue
            try:
                written = archive.archive(path, args.results)
            except archive.ArchiveError as err:
                print(f"error: {err}", file=sys.stderr)
                failed += 1
                continue
            for kept in written:
                total += kept.stat().st_size
                print(f"{kept} ({kept.stat().st_size} bytes)")
    print(f"{total} bytes written")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
