"""Spark local[1] against local[2] over a folder of logs, and vwlogs.read
against `fb export --format arrow` on one log (issue: Python and Spark).

Usage: python bench/spark_scaling.py FB FOLDER LOG
Prints one line per measurement: name, seconds (best of two; Spark: best of
three after three queries that warm the JVM up), rows.

Spark's Python data sources cannot prune columns: with the whole schema the
JVM copies every column of every row (the context is half of the bytes),
and on two cores it competes with the Python workers. The same query with
the columns named in a schema (`.schema("reward float")`, the way
docs/spark.md tells users to read a few columns) is measured beside it.
"""

import os
import subprocess
import sys
import time
import warnings

warnings.simplefilter("ignore")
fb, folder, log = sys.argv[1], sys.argv[2], sys.argv[3]

import vwlogs  # noqa: E402


def best(f, runs=2):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        n = f()
        times.append(time.perf_counter() - t)
    return min(times), n


def line(name, secs, rows, base=None):
    share = f"  {base / secs:.0%} of fb export" if base else ""
    print(f"{name:<48} {secs:7.3f} s  {rows or '-':>9} rows{share}")


def export():
    subprocess.run([fb, "export", "-q", "--threads", "1", "--format", "arrow", log, "-o", "/dev/null"], check=True)
    return None


base, _ = best(export)
line("fb export --threads 1 --format arrow", base, None)
line("vwlogs.read(path).read_all()", *best(lambda: vwlogs.read(log).read_all().num_rows), base)
line("vwlogs.read(path, batch_rows=8192).read_all()",
     *best(lambda: vwlogs.read(log, batch_rows=8192).read_all().num_rows), base)
line("vwlogs.read(path) iterated", *best(lambda: sum(b.num_rows for b in vwlogs.read(log))), base)
line("vwlogs.read(path, columns=[event_id, reward])",
     *best(lambda: vwlogs.read(log, columns=["event_id", "reward"]).read_all().num_rows), base)

os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession  # noqa: E402
from vwlogs.spark import JoinedLogs  # noqa: E402

WARMUP = 3
SCHEMAS = [("all columns", None), ("schema 'reward float'", "reward float")]
spark_times = {}
for cores in (1, 2):
    spark = (SparkSession.builder.master(f"local[{cores}]").appName("vwlogs-bench")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(JoinedLogs)
    for what, schema in SCHEMAS:
        reader = spark.read.format("vwlogs")
        if schema:
            reader = reader.schema(schema)
        df = reader.load(folder)

        def query():
            return df.agg({"reward": "sum", "*": "count"}).collect()[0][1]

        for _ in range(WARMUP):
            query()
        secs, rows = best(query, runs=3)
        spark_times[cores, what] = secs
        line(f"spark local[{cores}], {what}: count, sum(reward)", secs, rows)
    spark.stop()
for what, _ in SCHEMAS:
    print(f"local[2] / local[1], {what}: {spark_times[1, what] / spark_times[2, what]:.2f}x"
          f" ({len(os.listdir(folder))} files)")
