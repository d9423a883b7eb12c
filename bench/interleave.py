"""Two or more `fb` builds compared on the same commands, interleaved.

Each round runs every case once with every build, one after the other,
so that a slow moment of the machine weighs on all builds alike; the
table gives each build's best and median wall time and its largest peak
RSS. For a lent machine as for this one: the standard library and the
`fb` binaries only. Outputs go to a scratch folder under `--work` and are
removed before each run (a file renamed over another is written back at
the rename, which would time the disk).

Usage: python3 bench/interleave.py --work DIR [--rounds 3]
           --build NAME=BIN [--build NAME=BIN ...]
           --case 'LABEL|ARGS...' [--case ...] [--cache LOG ...]

`--cache LOG` puts a log in the page cache as a file read from disk is
(written back, evicted, read once), as `bench/scaling.py` does.

In ARGS, `{out}` is replaced by a scratch output path, `{dir}` by a
scratch directory path. Example:

  --case 'hour 16|export -q --force --threads 16 log.fb --partition-by
  hour -o {dir}'
"""

import argparse
import os
import shlex
import shutil
import statistics

# The sibling script's run (wall, CPU, peak RSS; stops on failure) and
# page-cache preparation.
from scaling import as_read_from_disk, run


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--build", action="append", required=True)
    p.add_argument("--case", action="append", required=True)
    p.add_argument("--cache", action="append", default=[])
    a = p.parse_args()
    for log in a.cache:
        as_read_from_disk(log)
    builds = [b.split("=", 1) for b in a.build]
    cases = [c.split("|", 1) for c in a.case]
    os.makedirs(a.work, exist_ok=True)
    out = os.path.join(a.work, "interleave.out")
    tree = os.path.join(a.work, "interleave.dir")
    samples = {}
    for _ in range(a.rounds):
        for label, args in cases:
            argv = [w.replace("{out}", out).replace("{dir}", tree)
                    for w in shlex.split(args)]
            for name, binary in builds:
                for path in (out, tree):
                    if os.path.isdir(path):
                        shutil.rmtree(path)
                    elif os.path.exists(path):
                        os.remove(path)
                wall, _, rss = run(binary, argv)
                samples.setdefault((label, name), []).append((wall, rss))
    head = " | ".join(f"{n} best s | median s | peak MiB" for n, _ in builds)
    print(f"| case | {head} |")
    print("|---|" + "---:|" * (3 * len(builds)))
    for label, _ in cases:
        cells = []
        for name, _ in builds:
            s = samples[(label, name)]
            walls = [w for w, _ in s]
            cells.append(f"{min(walls):.3f} | {statistics.median(walls):.3f}"
                         f" | {max(r for _, r in s) / 1024:.0f}")
        print(f"| {label} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
