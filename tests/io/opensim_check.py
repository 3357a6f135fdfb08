"""What the checks of OpenSim's own test cases share: expect() counting checks and failures,
OpenSim storage files read as labels and rows, a row at a time as OpenSim's Storage gives it,
and the closing line with the exit status."""
import sys

counts = {"checks": 0, "failures": 0}


def expect(cond, what):
    """Count a check; print and count it as failed when cond is false."""
    counts["checks"] += 1
    if not cond:
        counts["failures"] += 1
        print(f"FAIL: {what}", file=sys.stderr)


def read_storage(path):
    """An OpenSim storage file (.sto/.mot): its column labels and rows (numbers)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    end = next(i for i, l in enumerate(lines) if l.strip().lower() == "endheader")
    labels = [l.strip() for l in lines[end + 1].split("\t")]
    rows = [[float(x) for x in l.split()] for l in lines[end + 2:] if l.strip()]
    return labels, rows


def row_at(rows, t):
    """The row at time t, linearly interpolated (Storage::getDataAtTime)."""
    for i in range(len(rows)):
        if rows[i][0] >= t:
            if rows[i][0] == t or i == 0:
                return rows[i]
            a, b = rows[i - 1], rows[i]
            w = (t - a[0]) / (b[0] - a[0])
            return [x + w * (y - x) for x, y in zip(a, b)]
    return rows[-1]


def summary(name):
    """Print the counts; the exit status (1 when a check failed)."""
    print(f"{name}: {counts['checks']} checks, {counts['failures']} failed")
    return 1 if counts["failures"] else 0
