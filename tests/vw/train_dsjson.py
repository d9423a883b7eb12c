"""Feeds `fb convert` output to real Vowpal Wabbit and checks it learns.

Usage: python train_dsjson.py FB_BINARY DATA_DIR

For each case: convert a corpus log with `fb convert` (default mode), parse
every line with VW's DSJSON parser (a parse error raises), learn from the
learnable ones (lines with "_skipLearn":true are parsed but, as in the
reference's learning mode, not learned from), and check that VW counted
exactly one learned example per learnable line. Prints 'N passed, N failed'.
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile

import vowpalwabbit

# (name, corpus file, VW arguments, weighted examples per learnable line)
CASES = [
    ("cb", "valid_joined_logs/cb_simple.log", "--cb_explore_adf", 1),
    ("cb skip-learn", "skip_learn/cb/mixed_deferred_action_events.fb", "--cb_explore_adf", 1),
    ("cb 100 events", "valid_joined_logs/average_reward_100_interactions.fb", "--cb_explore_adf", 1),
    ("cb dedup inlined", "valid_joined_logs/cb_dedup_compressed.log", "--cb_explore_adf", 1),
    ("ccb", "valid_joined_logs/ccb_simple.log", "--ccb_explore_adf", 1),
    ("ccb skip-learn", "skip_learn/ccb/mixed_deferred_action_events.fb", "--ccb_explore_adf", 1),
    ("ccb slot ids", "valid_joined_logs/ccb_w_slot_id.log", "--ccb_explore_adf", 1),
    ("slates", "valid_joined_logs/slates_simple.log", "--slates", 1),
    ("slates 100 events", "valid_joined_logs/slates_average_reward_100_interactions.fb", "--slates", 1),
    ("ca", "valid_joined_logs/ca_loop_simple.fb", "--cats 4 --min_value 0 --max_value 100 --bandwidth 1", 1),
    # Outcomes whose value is a literal string: the default mode writes the
    # text as "v", which VW must still take.
    ("cb literal outcomes", "literal_outcomes/cb.fb", "--cb_explore_adf", 1),
    ("ccb literal outcomes", "literal_outcomes/ccb.fb", "--ccb_explore_adf", 1),
    ("slates literal outcomes", "literal_outcomes/slates.fb", "--slates", 1),
    ("ca skip-learn", "skip_learn/ca/mixed_deferred_action_events.fb",
     "--cats 4 --min_value 0 --max_value 100 --bandwidth 1", 1),
]


def convert(fb, data_dir, rel):
    # A folder of its own, removed with what is in it: a run leaves nothing
    # behind in the system's temporary folder.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.dsjson")
        cmd = [fb, "convert", "-q", "--inline-dedup", f"{data_dir}/{rel}", "-o", path]
        subprocess.run(cmd, check=True)
        with open(path, encoding="utf-8") as f:
            return [line for line in f if line.strip()]


def run_case(fb, data_dir, name, rel, args, per_line):
    lines = convert(fb, data_dir, rel)
    if not lines:
        return f"{name}: no DSJSON lines"
    learnable = 0
    for line in lines:
        doc = json.loads(line)  # every line must be JSON on its own
        if not doc.get("_skipLearn", False):
            learnable += 1
    ws = vowpalwabbit.Workspace(f"--dsjson --chain_hash {args} --quiet")
    learned = 0.0
    for line in lines:
        before = ws.get_weighted_examples()
        ex = ws.parse(line)
        # As in the reference's learning mode: skip-learn lines must parse,
        # but are not learned from (VW's own counters still count them).
        skip = json.loads(line).get("_skipLearn", False)
        if not skip:
            ws.learn(ex)
        ws.finish_example(ex)
        if not skip:
            learned += ws.get_weighted_examples() - before
    ws.finish()
    if learned != learnable * per_line:
        return f"{name}: VW learned {learned} examples, {learnable} lines are learnable"
    if learnable == 0:
        return f"{name}: nothing learnable: the case tests nothing"
    print(f"ok   {name}: {len(lines)} lines, {learnable} learnable, VW learned {learned}")
    return None


def compressed_case(fb):
    """`-o x.gz` on two threads writes one gzip member per megabyte: VW
    (`-d x.gz`, zlib's gzread), zcat and Python's gzip must read them all."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "cb.fb")
        subprocess.run([fb, "gen", "-q", "--size", "3MB", "--seed", "7", "-o", log], check=True)
        plain = subprocess.run([fb, "convert", "-q", log], check=True, capture_output=True).stdout
        gz = os.path.join(tmp, "cb.dsjson.gz")
        subprocess.run([fb, "convert", "-q", "--threads", "2", log, "-o", gz], check=True)
        with open(gz, "rb") as f:
            members = f.read().count(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
        if members < 2:
            return f"gzip members: {members}, the case tests nothing"
        with gzip.open(gz, "rb") as f:
            if f.read() != plain:
                return "Python's gzip reads other bytes"
        zcat = subprocess.run(["zcat", gz], check=True, capture_output=True).stdout
        if zcat != plain:
            return "zcat reads other bytes"
        lines = plain.count(b"\n")
        ws = vowpalwabbit.Workspace(f"--dsjson --chain_hash --cb_explore_adf -d {gz} --quiet")
        ws.run_parser()
        seen = ws.get_weighted_examples()
        ws.finish()
        if seen != lines:
            return f"VW read {seen} examples from {gz}, it holds {lines} lines in {members} members"
        print(f"ok   gzip members: {lines} lines in {members} members, read by VW, zcat and Python")
    return None


def main():
    fb, data_dir = sys.argv[1], sys.argv[2]
    failed = 0
    try:
        problem = compressed_case(fb)
    except Exception as e:
        problem = f"gzip members: {type(e).__name__}: {e}"
    if problem:
        failed += 1
        print(f"FAIL {problem}")
    for name, rel, args, per_line in CASES:
        try:
            problem = run_case(fb, data_dir, name, rel, args, per_line)
        except Exception as e:  # a VW parse error surfaces here
            problem = f"{name}: {type(e).__name__}: {e}"
        if problem:
            failed += 1
            print(f"FAIL {problem}")
    print(f"{len(CASES) + 1 - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
