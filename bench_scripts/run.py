"""Run every figure script (or ``--only`` some) R times and write results/<machine>/."""

import sys

from benchkit.runner import main

if __name__ == "__main__":
    sys.exit(main())
