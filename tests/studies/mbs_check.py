"""What the result-file checks share: h5py and numpy (the check is skipped, exit 77, when
/usr/bin/python3 cannot import them), check() collecting failures, and finish()."""
import sys

try:
    import h5py  # noqa: F401
    import numpy as np  # noqa: F401
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: /usr/bin/python3 cannot import h5py and numpy ({e})")
    sys.exit(77)

problems = []


def check(cond, what):
    """Record a failed condition (and print it)."""
    if not cond:
        problems.append(what)
        print("FAIL:", what)


def finish():
    """Exit 1 with the count of problems, or print ok and exit 0."""
    if problems:
        print(f"{len(problems)} problem(s)")
        sys.exit(1)
    print("ok")
    sys.exit(0)
