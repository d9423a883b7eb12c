"""vwlogs.read(...).read_all() on a log and on a folder of its pieces, at
several thread counts (issue 39; `cargo xtask bench --only vwlogs`).

Usage: python bench/vwlogs_threads.py LOG FOLDER RUNS THREADS...
Prints one tab-separated line per measurement: input (file or folder),
threads, best seconds of RUNS, rows. The rows must be the same for every
thread count and for the folder: otherwise it stops with an error.
"""

import sys
import time

import vwlogs

log, folder, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
threads = [int(t) for t in sys.argv[4:]]

expected = None
for n in threads:
    for name, source in (("file", log), ("folder", folder)):
        best = float("inf")
        for _ in range(max(runs, 1)):
            start = time.perf_counter()
            rows = vwlogs.read(source, threads=n).read_all().num_rows
            best = min(best, time.perf_counter() - start)
        if expected is None:
            expected = rows
        elif rows != expected:
            sys.exit(f"{name} with threads={n}: {rows} rows, expected {expected}")
        print(f"{name}\t{n}\t{best:.6f}\t{rows}", flush=True)
