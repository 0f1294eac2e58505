#!/usr/bin/env python3
"""Independent oracle for crates/engine/tests/windowctl_e2e.rs.

Computes, without any code of this project, what `windowctl run` must print for event-time
tumbling windows with a bounded-out-of-orderness watermark and zero allowed lateness, following
Flink's documented rules:
  * the watermark after an element is max(timestamp seen) - delay - 1 (start: -inf);
  * an element is late (dropped) when its window's max timestamp (end - 1) <= the watermark in
    force when it arrives (the one emitted after the previous element);
  * every window that received an element fires exactly once.
Writes the expected result rows (sorted) and the late count. Run:
  python3 oracle.py ../../../../data/usgs_quakes_tiny.csv 3600000 3600000 max > quakes_1h_max_delay1h.csv
"""
import csv
import sys


def fmt(v):
    if v == int(v) and abs(v) < 2**53:
        return str(int(v))
    return repr(v)


def main():
    path, size, delay, agg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    wm = None
    windows = {}
    late = 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            ts, key, value = int(row["event_time_ms"]), row["key"], float(row["value"])
            start = ts - (ts % size)  # Python's % floors, as window starts must
            end = start + size
            if wm is not None and end - 1 <= wm:
                late += 1
            else:
                windows.setdefault((key, start, end), []).append(value)
            mx = ts if wm is None else max(ts, wm + delay + 1)
            wm = mx - delay - 1
    rows = []
    for (key, start, end), vs in windows.items():
        if agg == "count":
            r = len(vs)
        elif agg == "max":
            r = max(vs)
        elif agg == "sum":
            r = 0.0
            for v in vs:
                r += v
        else:
            raise SystemExit("agg must be count, max or sum")
        rows.append((key, start, end, fmt(r)))
    rows.sort()
    print(f"# late={late}")
    print("key,window_start,window_end,result")
    for r in rows:
        print(",".join(str(x) for x in r))


main()
