"""Thread scaling, and folders of small logs against one file (issue 39).

A one-call script for a lent machine with many cores, where neither cargo
nor the repository's venv is at hand: it needs only an `fb` binary, the
standard library and, for the vwlogs table, an installed vwlogs with
pyarrow. On this project's own machines `cargo xtask bench --only folders`
and `--only vwlogs` time the same commands.

Tables (Markdown on standard output, every sample in `--raw`):

1. The CCB log of `cargo xtask bench --only folders` (`fb gen
   --problem-type ccb --seed 4 --size 200MiB`) and the folder of its
   200 KiB pieces (`fb split`), each command at each thread count, file
   then folder in turn for `--runs` rounds: best wall time, median CPU
   time (user and system, all threads) and the largest peak RSS.
2. A bigger CB log (`--big`, seed 1): convert, stats, validate and the exports
   (Parquet, Arrow, Parquet partitioned by hour) at each thread count,
   best wall time and MB/s of log.
3. `vwlogs.read(...).read_all()` in this process on the CCB log and its
   pieces, after one warm-up read: best wall time, and the process' CPU
   time over the wall time (cores kept busy).

Every generated input is put in the page cache as a file read from disk
is (written back, evicted, read once): pages of a file just written are
small and cost a mapped or copied read more (bench/NOTES.md).

The CCB log's size and its pieces' size can be changed
(`--ccb-size 1GiB --piece-size 256KiB --big 0` is issue 39's 16-core
case: 4,104 files), and table 2 left out.

Usage: python3 bench/scaling.py --fb BIN --work DIR [--runs 3]
           [--threads 1,2,4,8,16] [--ccb-size 200MiB] [--piece-size 200KiB]
           [--big 2GiB|0] [--raw FILE] [--no-vwlogs]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def run(fb, args):
    """(wall s, CPU s, peak RSS KiB) of one run of `fb args`; stops the
    script when it fails."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [fb, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    err = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"fb {' '.join(args)}: exit {code}\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def as_read_from_disk(path):
    """Written back, evicted, read once (see the module's doc)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:
            pass  # a sandbox without it: the pages stay as written
        while os.read(fd, 1 << 20):
            pass
    finally:
        os.close(fd)


def inputs(fb, work, ccb_size, piece_size, big):
    """The CCB log, its pieces, and the big CB log (None: not wanted),
    made when missing."""
    os.makedirs(work, exist_ok=True)
    ccb = os.path.join(work, f"ccb-{ccb_size}.fb")
    pieces = os.path.join(work, f"ccb-{ccb_size}.pieces-{piece_size}")
    cb = os.path.join(work, f"cb-{big}.fb") if big else None
    made = [
        (ccb, ["gen", "-q", "--problem-type", "ccb", "--seed", "4",
               "--size", ccb_size, "-o", ccb]),
        (pieces, ["split", "-q", "--max-size", piece_size, ccb,
                  "-o", pieces]),
    ]
    if cb:
        made.append((cb, ["gen", "-q", "--problem-type", "cb", "--seed", "1",
                          "--size", big, "-o", cb]))
    for path, args in made:
        if not os.path.exists(path):
            wall, _, _ = run(fb, args)
            print(f"made {path} in {wall:.1f} s", file=sys.stderr, flush=True)
    files = sorted(os.path.join(pieces, f) for f in os.listdir(pieces))
    for path in [ccb, *([cb] if cb else []), *files]:
        as_read_from_disk(path)
    return ccb, pieces, len(files), cb


# name, arguments before the input, output: None (standard output),
# "null" (-o /dev/null) or a file name under the work folder.
COMMANDS = [
    ("convert", ["convert", "-q"], "null"),
    ("stats", ["stats", "-q"], None),
    ("validate", ["validate", "-q"], None),
    ("report", ["report", "-q", "--force"], "report.html"),
    ("export (Parquet)", ["export", "-q", "--force"], "out.parquet"),
    ("export (Arrow)", ["export", "-q", "--force", "--format", "arrow"],
     "out.arrow"),
    # A directory of hourly files, several open at once: the export whose
    # peak memory is highest (bench/NOTES.md, ninth stop).
    ("export (Parquet, by hour)",
     ["export", "-q", "--force", "--partition-by", "hour"], "tree"),
]


def timed(fb, work, command, threads, source, raw, label):
    name, args, output = command
    argv = [*args, "--threads", str(threads), source]
    out = None
    if output == "null":
        argv += ["-o", "/dev/null"]
    elif output is not None:
        out = os.path.join(work, output)
        argv += ["-o", out]
        # A file renamed over another has its data written out at the
        # rename on ext4: that would time the disk, not fb.
        if os.path.isdir(out):
            shutil.rmtree(out)
        elif os.path.exists(out):
            os.remove(out)
    sample = run(fb, argv)
    raw.write(f"{label}\t{name}\t{threads}\t{sample[0]:.6f}\t"
              f"{sample[1]:.6f}\t{sample[2]}\n")
    raw.flush()
    return sample


def summary(samples):
    return (min(s[0] for s in samples),
            statistics.median(s[1] for s in samples),
            max(s[2] for s in samples) / 1024)


def folders_table(fb, work, ccb, pieces, count, threads, runs, raw):
    size = os.path.getsize(ccb)
    lines = [
        f"Folder of {count} pieces against the one file "
        f"({size / 2**20:.0f} MiB CCB), "
        f"best wall of {runs} rounds (file then folder), median CPU, "
        f"largest peak RSS. Target: the folder at 90% of the file's speed.",
        "",
        "| command | threads | file s | folder s | folder speed / file speed "
        "| CPU s file | CPU s folder | peak RSS MiB file | folder |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    best = {}
    export_peak = 0
    for command in COMMANDS:
        for n in threads:
            file_s, folder_s = [], []
            for _ in range(runs):
                file_s.append(timed(fb, work, command, n, ccb, raw, "file"))
                folder_s.append(
                    timed(fb, work, command, n, pieces, raw, "folder"))
            f, d = summary(file_s), summary(folder_s)
            best[(command[0], n)] = f[0]
            if command[0].startswith("export"):
                export_peak = max(export_peak, f[2], d[2])
            lines.append(
                f"| {command[0]} | {n} | {f[0]:.3f} | {d[0]:.3f} | "
                f"{100 * f[0] / d[0]:.0f}% | {f[1]:.3f} | {d[1]:.3f} | "
                f"{f[2]:.0f} | {d[2]:.0f} |")
            print(lines[-1], file=sys.stderr, flush=True)
    lines.append("")
    one = best.get(("export (Parquet)", 1))
    if one and best.get(("convert", 1)):
        lines.append(f"- Parquet on one thread at "
                     f"{100 * best[('convert', 1)] / one:.0f}% of convert's "
                     f"speed (target 50%).")
    for fmt in ("Parquet", "Arrow"):
        one = best.get((f"export ({fmt})", 1))
        parts = [f"{n}: {one / best[(f'export ({fmt})', n)]:.2f}x"
                 for n in threads if n > 1 and one]
        lines.append(f"- {fmt} over one thread, the file: {', '.join(parts)}"
                     " (target 1.8x on two).")
    lines.append(f"- Largest peak RSS of an export: {export_peak:.0f} MiB "
                 "(target under 256 MiB).")
    return "\n".join(lines)


def big_table(fb, work, cb, threads, runs, raw):
    size = os.path.getsize(cb)
    lines = [
        f"CB log of {size / 1e9:.2f} GB, best wall of {runs}, MB/s of log, "
        "largest peak RSS.",
        "",
        "| command | threads | s | MB/s | over 1 thread | peak RSS MiB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for command in COMMANDS:
        if command[0] == "report":
            continue
        first = None
        for n in threads:
            s = summary([timed(fb, work, command, n, cb, raw, "big")
                         for _ in range(runs)])
            first = first or s[0]
            lines.append(f"| {command[0]} | {n} | {s[0]:.3f} | "
                         f"{size / s[0] / 1e6:.0f} | {first / s[0]:.2f}x | "
                         f"{s[2]:.0f} |")
            print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def vwlogs_table(ccb, pieces, threads, runs, raw):
    try:
        import vwlogs
    except ImportError as e:
        return f"vwlogs not importable here: {e}"
    expected = vwlogs.read(ccb, threads=1).read_all().num_rows
    size = os.path.getsize(ccb)
    lines = [
        f"`vwlogs.read(...).read_all()`, {expected} rows, best wall of "
        f"{runs} in one process; cores = process CPU / wall, median.",
        "",
        "| threads | file s | file MB/s | over 1 thread | cores | folder s "
        "| over 1 thread | cores | folder speed / file speed |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    first = {}
    for n in threads:
        row = {}
        for label, source in (("file", ccb), ("folder", pieces)):
            walls, cores = [], []
            for _ in range(runs):
                cpu, start = time.process_time(), time.perf_counter()
                rows = vwlogs.read(source, threads=n).read_all().num_rows
                wall = time.perf_counter() - start
                walls.append(wall)
                cores.append((time.process_time() - cpu) / wall)
                raw.write(f"vwlogs-{label}\tread_all\t{n}\t{wall:.6f}\t"
                          f"{cores[-1] * wall:.6f}\t0\n")
                if rows != expected:
                    sys.exit(f"vwlogs {label} threads={n}: {rows} rows, "
                             f"expected {expected}")
            row[label] = (min(walls), statistics.median(cores))
            first.setdefault(label, row[label][0])
        f, d = row["file"], row["folder"]
        lines.append(
            f"| {n} | {f[0]:.3f} | {size / f[0] / 1e6:.0f} | "
            f"{first['file'] / f[0]:.2f}x | {f[1]:.2f} | {d[0]:.3f} | "
            f"{first['folder'] / d[0]:.2f}x | {d[1]:.2f} | "
            f"{100 * f[0] / d[0]:.0f}% |")
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fb", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", default=f"1,2,{os.cpu_count()}")
    p.add_argument("--ccb-size", default="200MiB",
                   help="size of the CCB log cut into pieces")
    p.add_argument("--piece-size", default="200KiB",
                   help="fb split --max-size of its pieces")
    p.add_argument("--big", default="2GiB",
                   help="size of the CB log of table 2; 0: no table 2")
    p.add_argument("--raw", default=os.devnull)
    p.add_argument("--no-vwlogs", action="store_true")
    a = p.parse_args()
    threads = sorted({int(t) for t in a.threads.split(",")})
    fb = os.path.abspath(a.fb)
    big = None if a.big == "0" else a.big
    ccb, pieces, count, cb = inputs(fb, a.work, a.ccb_size, a.piece_size,
                                    big)
    tables = []
    with open(a.raw, "w") as raw:
        raw.write("input\tcommand\tthreads\twall_s\tcpu_s\tmaxrss_kib\n")
        tables.append(folders_table(fb, a.work, ccb, pieces, count, threads,
                                    a.runs, raw))
        if cb:
            tables.append(big_table(fb, a.work, cb, threads,
                                    max(a.runs - 1, 1), raw))
        if not a.no_vwlogs:
            tables.append(vwlogs_table(ccb, pieces, threads, a.runs, raw))
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
