"""vwlogs.evaluate: the figures of `fb evaluate --json`, as a pyarrow table.

Run with FB=path/to/fb (default target/debug/fb) after installing the
vwlogs wheel, as .ci/run does.
"""

import json
import os
import subprocess

import pyarrow as pa
import pytest

import vwlogs

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
FB = os.environ.get("FB", os.path.join(ROOT, "target", "debug", "fb"))
DATA = os.path.join(ROOT, "tests", "data", "valid_joined_logs")


def fb_json(*args):
    return json.loads(subprocess.run([FB, "evaluate", "-q", "--json", *args], check=True,
                                     capture_output=True).stdout)


@pytest.mark.parametrize(
    "log,kind,policies",
    [
        ("average_reward_100_interactions.fb", "cb", ["baseline", "uniform"]),
        ("ccb_sum_reward_100_interactions.fb", "ccb", ["uniform"]),
        ("slates_average_reward_100_interactions.fb", "slates", ["baseline"]),
    ],
)
def test_evaluate_equals_the_command_line(log, kind, policies):
    path = os.path.join(DATA, log)
    table = vwlogs.evaluate(path, policy=policies)
    assert isinstance(table, pa.Table)
    assert table.column_names == ["window", "problem_type", "policy", "estimator", "decisions",
                                  "value", "low", "high"]
    flags = [x for p in policies for x in ("--policy", p)]
    want = fb_json(*flags, path)
    assert json.loads(table.schema.metadata[b"fb.evaluate"]) == want
    rows = table.to_pylist()
    assert {r["policy"] for r in rows} == {"logged", *policies}
    got = {(r["policy"], r["estimator"]): r for r in rows if r["problem_type"] == kind}
    for i, p in enumerate(["logged", *policies]):
        fig = want["by_problem_type"][kind]["policies"][i]
        if kind == "slates":
            assert got[(p, "pseudo_inverse")]["value"] == fig["pseudo_inverse"]
            continue
        b = fig["first_slot"] if kind == "ccb" else fig
        assert got[(p, "ips")]["value"] == b["ips"]
        assert [got[(p, "ips")]["low"], got[(p, "ips")]["high"]] == b["gaussian_ci95"]
        assert got[(p, "snips")]["value"] == b["snips"]


def test_evaluate_threads_give_the_same_figures(tmp_path):
    # A folder of two generated CCB logs of 5,000 decisions: batches of
    # records cut differently on each thread count, sums added in log
    # order all the same, as `fb evaluate --threads N` adds them.
    folder = tmp_path / "logs"
    folder.mkdir()
    for seed in ("3", "4"):
        subprocess.run([FB, "gen", "-q", "--problem-type", "ccb", "--events", "5000", "--seed", seed,
                        "-o", str(folder / f"ccb-{seed}.fb")], check=True)
    policies = ["baseline", "uniform"]
    one = vwlogs.evaluate(str(folder), policy=policies, by="hour", threads=1)
    want = fb_json("--threads", "3", "--by", "hour", "--policy", "baseline", "--policy", "uniform",
                   str(folder))
    assert json.loads(one.schema.metadata[b"fb.evaluate"]) == want
    assert want["by_problem_type"]["ccb"]["decisions"] == 10000
    for threads in (2, 4):
        assert vwlogs.evaluate(str(folder), policy=policies, by="hour", threads=threads).equals(
            one, check_metadata=True), threads


def test_evaluate_by_day_and_errors(tmp_path):
    path = os.path.join(DATA, "average_reward_100_interactions.fb")
    table = vwlogs.evaluate(path, policy="uniform", by="day")
    windows = {w for w in table.column("window").to_pylist() if w}
    assert windows, table
    with pytest.raises(ValueError, match="not a policy"):
        vwlogs.evaluate(path, policy="greedy")
    pred = tmp_path / "short.pred"
    pred.write_text("0:1\n")
    with pytest.raises(ValueError, match="fewer examples"):
        vwlogs.evaluate(path, policy=f"predictions:{pred}")
    with pytest.raises(ValueError, match="probabilities for a batch"):
        vwlogs.evaluate(path, policy=lambda batch: [0.5])


def test_a_callable_policy_equals_the_named_one():
    """A callable giving the uniform policy's probabilities (1 / actions)
    is the uniform policy: the same figures as policy="uniform"."""
    import pyarrow.compute as pc

    path = os.path.join(DATA, "average_reward_100_interactions.fb")

    def uniform(batch):
        n = pc.list_value_length(batch.column("actions")).to_pylist()
        return [1.0 / k if k else 0.0 for k in n]

    got = vwlogs.evaluate(path, policy=uniform).to_pylist()
    want = vwlogs.evaluate(path, policy="uniform").to_pylist()
    strip = lambda rows: [{**r, "policy": "p"} for r in rows if r["problem_type"] == "cb"]
    assert strip(got) == strip(want)
    assert {r["policy"] for r in got} == {"logged", "uniform"}


def test_evaluate_multislot_and_cats():
    ccb = os.path.join(DATA, "ccb_sum_reward_100_interactions.fb")
    rows = vwlogs.evaluate(ccb, policy="uniform").to_pylist()
    want = fb_json("--policy", "uniform", ccb)["by_problem_type"]["ccb"]["policies"][1]
    got = {r["estimator"]: r for r in rows if r["policy"] == "uniform"}
    overall = got["multislot_r_overall"]
    assert overall["value"] == want["multislot"]["r_overall"]
    # Rewards outside [0, 1] in this log: no interval (null; None ends).
    assert [overall["low"], overall["high"]] == (want["multislot"]["r_overall_ci95"]
                                                 or [None, None])
    ca = os.path.join(DATA, "ca_loop_simple.fb")
    counted = json.loads(vwlogs.evaluate(ca, policy="baseline").schema.metadata[b"fb.evaluate"])
    assert counted["not_estimated"]["ca"] == 3
    cli = fb_json("--cats", "8,5,0,100", "--policy", "baseline", "--policy", "constant:40", ca)
    assert cli["by_problem_type"]["ca"]["decisions"] == 3
    for cats in [(8, 5, 0, 100), "8,5,0,100"]:
        table = vwlogs.evaluate(ca, policy=["baseline", "constant:40"], cats=cats)
        assert json.loads(table.schema.metadata[b"fb.evaluate"]) == cli
        assert "ca" in {r["problem_type"] for r in table.to_pylist()}
    with pytest.raises(ValueError, match="MIN must be below MAX"):
        vwlogs.evaluate(ca, cats="8,5,100,0")
