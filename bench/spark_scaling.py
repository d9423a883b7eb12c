"""Spark local[1] against local[2] over a folder of logs, and vwlogs.read
against `fb export --format arrow` on one log (issue: Python and Spark).

Usage: python bench/spark_scaling.py FB FOLDER LOG
Prints one line per measurement: name, seconds (best of two), rows.
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


def export():
    subprocess.run([fb, "export", "-q", "--threads", "1", "--format", "arrow", log, "-o", "/dev/null"], check=True)
    return None


print("fb export --format arrow", *best(export))
print("vwlogs.read(path).read_all()", *best(lambda: vwlogs.read(log).read_all().num_rows))
print("vwlogs.read(path, batch_rows=8192) iterated", *best(lambda: sum(b.num_rows for b in vwlogs.read(log, batch_rows=8192))))

os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession  # noqa: E402
from vwlogs.spark import JoinedLogs  # noqa: E402

for cores in (1, 2):
    spark = (SparkSession.builder.master(f"local[{cores}]").appName("vwlogs-bench")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(JoinedLogs)
    df = spark.read.format("vwlogs").load(folder)
    print(f"spark local[{cores}] sum(reward)", *best(lambda: df.agg({"reward": "sum", "*": "count"}).collect()[0][1]))
    spark.stop()
