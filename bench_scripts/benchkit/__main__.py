"""``python -m benchkit`` (or the ``benchkit`` console script): ``compare`` two versions of a function."""

from __future__ import annotations

import sys

from . import __version__, compare

USAGE = """usage: python -m benchkit compare OLD NEW [--args EXPR] [--boundary completed|dispatch|loop] [--runs N]
       python -m benchkit --version

OLD and NEW are FILE.py:FUNCTION, REV:FILE.py:FUNCTION or MODULE:FUNCTION.
`python -m benchkit compare --help` lists every option."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if argv[0] == "--version":
        print(f"benchkit {__version__}")
        return 0
    if argv[0] == "compare":
        return compare.main(argv[1:])
    print(f"benchkit: unknown command {argv[0]!r}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
