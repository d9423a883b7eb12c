"""Real readers of `fb export`: pyarrow, DuckDB, Polars and pandas.

Usage: python check_export.py FB_BINARY DATA_DIR SCRATCH_DIR

For every corpus log, the corpus folder and a generated 20 MB log of each
problem type (tens of thousands of rows, several Arrow record batches):
export to Parquet and to an Arrow IPC file, read both with pyarrow, and
check them against `fb convert`'s DSJSON of the same log: the
same number of rows, the same event ids in the same order, the same rewards
(cost = -reward; each CCB slot's and each Slates slot's too), label
probabilities, outcomes and baseline actions. Then DuckDB, Polars and pandas
read the Parquet file: the mean reward per problem type (the README's
query) is `fb stats --json`'s. Last, DuckDB runs a GROUP BY over a
date-partitioned export and checks it against `fb stats --json`. Prints
'N passed, N failed'.
"""

import datetime
import json
import math
import os
import subprocess
import sys

import duckdb
import pandas
import polars
import pyarrow.ipc
import pyarrow.parquet


def run(*args):
    return subprocess.run(list(args), check=True, capture_output=True).stdout


def dsjson(fb, log, flags):
    lines = run(fb, "convert", "-q", "--threads", "1", *flags, log).decode().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def compare(name, table, want):
    """The rows of `table` against the DSJSON lines `want` of the same log:
    the same count, event ids in order, rewards (cost = -reward), label
    probabilities, outcomes and baseline actions."""
    assert table.schema.metadata[b"fb.schema_version"] == b"2", name
    assert table.schema.field("baseline_actions").type == table.schema.field("actions").type
    # Only the columns compared below: the context is most of a row's
    # bytes, and turning it into Python strings was most of this check's
    # time.
    used = ["problem_type", "event_id", "reward", "probabilities", "pass_probability",
            "outcomes", "slots", "baseline_actions", "pdf_value"]
    rows = table.select(used).to_pylist()
    assert len(rows) == len(want), f"{name}: {len(rows)} rows, {len(want)} lines"
    for row, line in zip(rows, want):
        kind = row["problem_type"]
        if kind in ("cb", "multistep"):
            assert row["event_id"] == line["EventId"], (name, row["event_id"])
            assert close(-row["reward"], line["_label_cost"]), (name, row["event_id"])
            label_p = row["probabilities"][0] * row["pass_probability"]
            assert close(label_p, line["_label_probability"]), (name, row["event_id"])
            check_outcomes(name, row, line["o"])
        elif kind == "ccb":
            slots = line["_outcomes"]
            assert len(row["slots"]) == len(slots), (name, row["event_id"])
            for slot, got in zip(slots, row["slots"]):
                assert close(-got["reward"], slot["_label_cost"]), (name, row["event_id"])
                assert close(-got["original_reward"], slot["_original_label_cost"]), name
                assert got["actions"] == slot["_a"], (name, row["event_id"])
            # The row's reward is what `fb stats` adds up: its slots'.
            total = sum(-slot["_label_cost"] for slot in slots)
            assert close(row["reward"], total), (name, row["event_id"], row["reward"], total)
            assert row["baseline_actions"] == line.get("_ba"), (name, row["event_id"])
            check_outcomes(name, row, [o for slot in slots for o in slot.get("_o", [])])
        elif kind == "slates":
            assert close(-row["reward"], line["_label_cost"]), (name, row["event_id"])
            assert len(row["slots"]) == len(line["_outcomes"]), (name, row["event_id"])
            for got in row["slots"]:
                assert close(-got["reward"], line["_label_cost"]), (name, row["event_id"])
            check_outcomes(name, row, line["o"])
        elif kind == "ca":
            assert close(-row["reward"], line["_label_ca"]["cost"]), (name, row["event_id"])
            assert close(row["pdf_value"], line["_label_ca"]["pdf_value"]), name


def check_outcomes(name, row, want):
    """A row's outcomes are its DSJSON line's `want`, in order."""
    got = row["outcomes"]
    assert len(got) == len(want), (name, row["event_id"], len(got), len(want))
    for o, w in zip(got, want):
        assert o["event_id"] == w["EventId"], (name, row["event_id"])
        assert o["action_taken"] == w["ActionTaken"], (name, row["event_id"])
        if "v" in w and o["value"] is not None:
            assert close(o["value"], w["v"]), (name, row["event_id"])


def check_means(name, parquet, stats):
    """The README's query, in DuckDB, Polars and pandas: the mean reward
    per problem type is `fb stats --json`'s `reward_mean`."""
    want = {k: (v["events"], v["reward_mean"]) for k, v in stats["by_problem_type"].items()}
    got = duckdb.sql(
        f"SELECT problem_type, count(*), avg(reward) FROM '{parquet}' GROUP BY ALL"
    ).fetchall()
    assert {k for k, _, _ in got} == set(want), (name, got, want)
    for kind, n, mean in got:
        assert n == want[kind][0], (name, kind, n, want[kind])
        assert close(mean, want[kind][1]), (name, "duckdb", kind, mean, want[kind])
    frame = polars.read_parquet(parquet).group_by("problem_type").agg(polars.col("reward").mean())
    for kind, mean in frame.iter_rows():
        assert close(mean, want[kind][1]), (name, "polars", kind, mean, want[kind])
    means = pandas.read_parquet(parquet).groupby("problem_type")["reward"].mean()
    for kind, mean in means.items():
        assert close(mean, want[kind][1]), (name, "pandas", kind, mean, want[kind])


def check_log(fb, log, flags, scratch):
    """One log: its rows in both formats equal its DSJSON lines, and their
    mean rewards are `fb stats`'."""
    want = dsjson(fb, log, flags)
    parquet = os.path.join(scratch, "one.parquet")
    arrow = os.path.join(scratch, "one.arrow")
    run(fb, "export", "-q", "--force", *flags, log, "-o", parquet)
    run(fb, "export", "-q", "--force", "--format", "arrow", *flags, log, "-o", arrow)
    tables = {
        "parquet": pyarrow.parquet.read_table(parquet),
        "arrow": pyarrow.ipc.open_file(arrow).read_all(),
    }
    for name, table in tables.items():
        compare(name, table, want)
    # Polars and pandas take the same file.
    assert polars.read_parquet(parquet).height == len(want)
    assert len(pandas.read_parquet(parquet)) == len(want)
    stats = json.loads(run(fb, "stats", "--json", "-q", *flags, log))
    check_means(log, parquet, stats)
    return len(want)


def check_partitioned(fb, logs_dir, scratch):
    """DuckDB over a date-partitioned export equals `fb stats --json`."""
    out = os.path.join(scratch, "by-date")
    run(fb, "export", "-q", "--force", "--partition-by", "date", logs_dir, "-o", out)
    stats = json.loads(run(fb, "stats", "--json", logs_dir))
    rows = duckdb.sql(
        f"SELECT date, count(*) AS n, avg(reward) AS mean, sum(reward) AS total "
        f"FROM read_parquet('{out}/**/*.parquet', hive_partitioning=true) GROUP BY date"
    ).fetchall()
    assert len(rows) > 1, rows
    assert sum(r[1] for r in rows) == stats["joined"], (rows, stats["joined"])
    # Each date against `fb stats` of that date alone: the count, and the
    # mean reward over every problem type (a CCB row holds the sum of its
    # slots' rewards, what stats adds up).
    for day, n, mean, _total in rows:
        nxt = (day + datetime.timedelta(days=1)).isoformat()
        one = json.loads(
            run(fb, "stats", "--json", "-q", "--since", day.isoformat(), "--until", nxt, logs_dir)
        )
        assert one["kept"] == n, (day, n, one["kept"])
        by_type = one["by_problem_type"]
        want = sum(v["reward_sum"] for v in by_type.values()) / n
        assert close(mean, want), (day, mean, want)
    # stats' cost sum is -sum(reward) over every row.
    got = duckdb.sql(
        f"SELECT sum(reward) FROM read_parquet('{out}/**/*.parquet', hive_partitioning=true)"
    ).fetchone()[0]
    assert close(-got, stats["cost_sum"]), (got, stats["cost_sum"])


def main():
    fb, data, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(scratch, exist_ok=True)
    cases = [("corpus folder", os.path.join(data, "valid_joined_logs"), [])]
    for sub in ("valid_joined_logs", "skip_learn/cb", "skip_learn/ccb", "skip_learn/ca", "literal_outcomes"):
        for name in sorted(os.listdir(os.path.join(data, sub))):
            if name.endswith(".json"):
                continue
            flags = ["--multistep"] if "multistep" in name else []
            cases.append((f"{sub}/{name}", os.path.join(data, sub, name), flags))
    for kind in ("cb", "ccb", "slates", "ca", "multistep"):
        log = os.path.join(scratch, f"gen-{kind}.fb")
        run(fb, "gen", "-q", "--problem-type", kind, "--size", "20MB", "--seed", "3", "-o", log)
        flags = ["--multistep"] if kind == "multistep" else []
        cases.append((f"generated {kind}", log, flags))
    passed = failed = 0
    for name, log, flags in cases:
        try:
            n = check_log(fb, log, flags, scratch)
            print(f"ok   {name}: {n} rows")
            passed += 1
        except Exception as e:  # noqa: BLE001 - every failure is reported
            print(f"FAIL {name}: {e!r}")
            failed += 1
    try:
        check_partitioned(fb, os.path.join(data, "valid_joined_logs"), scratch)
        print("ok   DuckDB over a date-partitioned export")
        passed += 1
    except Exception as e:  # noqa: BLE001
        print(f"FAIL DuckDB over a date-partitioned export: {e!r}")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
