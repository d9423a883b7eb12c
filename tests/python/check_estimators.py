"""`fb evaluate` against vw-estimators 0.2.2, event by event.

Usage: python check_estimators.py FB_BINARY DATA_DIR SCRATCH_DIR VW_PYTHON

For every corpus log of tests/data/expected/MANIFEST.tsv that is a joined
log, and for a generated log of each problem type (`fb gen`), and for each
problem type fb estimates in it: convert it with `fb convert --only TYPE`,
feed every learnable DSJSON line to vw-estimators' estimators and intervals
for the logged policy, the baseline and the uniform policy (for CCB also
the first-slot, per-slot and multislot estimators; for CA, with the CATS
parameters CATS, the CATS transformer and a constant action), and compare
every figure with `fb evaluate --only TYPE --json` to 1e-9 relative. Then a
predictions file made by real VW (VW_PYTHON: a Python with `vowpalwabbit`):
train `--cb_explore_adf` on the first piece of a generated CB log (and
`--ccb_explore_adf` on a CCB one, `--slates` on a Slates one, `--cats` on
a CA one), predict the rest with `-p`, and compare the same figures for
`predictions:FILE`. Prints 'N passed, N failed' and exits 1 on any
failure.

DSJSON numbers are f32 texts: each is rounded to f32 here as fb reads the
log's f32s. Rewards are the original rewards (`_original_label_cost`; the
Slates line has only `_label_cost`, the CA line `_label_ca.cost`).
"""

import json
import math
import os
import struct
import subprocess
import sys

from estimators.bandits import clopper_pearson, cressieread, gaussian, ips, snips
from estimators.bandits.cats_utils import CatsTransformer
from estimators.ccb import first_slot, multislot, pdis_cressieread
from estimators.slates import gaussian as slates_gaussian
from estimators.slates import pseudo_inverse

# The CATS parameters every check passes (`fb evaluate --cats`): the range
# of `fb gen --problem-type ca` actions is [0, 100).
CATS = (8, 5.0, 0.0, 100.0)
CATS_FLAG = ["--cats", ",".join(str(x) for x in CATS)]
# A constant CA policy: the centre of the second bin.
CA_CONSTANT = "constant:18.75"

REL = 1e-9
# Figures that are 0 up to rounding (an interval end at 0, a sum of terms
# that cancel) are compared absolutely.
ABS = 1e-12


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def run(*args):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True).stdout


def lines_of(fb, logs, flags):
    out = run(fb, "convert", "-q", "--threads", "1", *flags, *logs).decode()
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def read_ca_predictions(path):
    """VW's --cats -p output: per example `action,pdf_value`; the
    predicted actions."""
    with open(path, encoding="utf-8") as f:
        return [float(l.split()[0].split(",")[0]) for l in f if l.strip()]


def read_predictions(path):
    """VW's -p output: examples as lists of slots, each a list of
    (action, probability); blank lines separate examples."""
    examples, block = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                if block:
                    examples.append(block)
                    block = []
                continue
            scores = line.split()[0]
            block.append([(int(a), float(p)) for a, p in (t.split(":") for t in scores.split(","))])
    if block:
        examples.append(block)
    return examples


class Bandit:
    """vw-estimators' CB estimators and intervals for one policy; with
    `first`, wrapped in its CCB first-slot classes (lists of slots)."""

    def __init__(self, first=False):
        we = first_slot.Estimator if first else (lambda x: x)
        wi = first_slot.Interval if first else (lambda x: x)
        self.first = first
        self.est = {"ips": we(ips.Estimator()), "snips": we(snips.Estimator()),
                    "cressie_read": we(cressieread.Estimator())}
        self.ci = {"cressie_read_ci95": wi(cressieread.Interval()),
                   "gaussian_ci95": wi(gaussian.Interval()),
                   "clopper_pearson_ci95": wi(clopper_pearson.Interval())}
        self.broken = set()

    def add(self, p_log, r, p_pred, p_drop):
        for e in self.est.values():
            e.add_example(p_log, r, p_pred)
        for k, i in self.ci.items():
            try:
                i.add_example(p_log, r, p_pred, p_drop)
            except (AssertionError, ValueError):
                # A reward outside [0, 1]: no interval (fb says null).
                self.broken.add(k)

    def figures(self):
        out = {}
        for k, e in self.est.items():
            v = e.get()
            out[k] = (v[0] if v else None) if self.first else v
        for k, i in self.ci.items():
            if k in self.broken:
                out[k] = None
                continue
            v = i.get()
            if self.first:
                v = v[0] if v else None
            out[k] = None if v is None or v[0] is None else [float(v[0]), float(v[1])]
        return out


def policy_p(policy, slot_actions, slot_p, baseline, dist, cb):
    """The target probability of the logged action (slot_actions[0])."""
    if policy == "logged":
        return slot_p
    if policy == "baseline":
        return 1.0 if slot_actions[0] == baseline else 0.0
    if policy == "uniform":
        return 1.0 / len(slot_actions)
    shift = 1 if cb else 0
    return sum(q for a, q in dist if a + shift == slot_actions[0])


def pdis_add(t, p_logs, rs, qs, p_drop):
    """pdis_cressieread.Interval.add_example, slot by slot: its loop raises
    at the first slot with a reward outside [0, 1] and leaves the later
    slots out of that decision. fb takes each slot's interval on its own
    (null for a slot with such a reward), so here each slot's IntervalImpl
    takes what it can and a slot that refused a reward is marked."""
    ci = t["pdis_ci"]
    w = 1.0
    for i, (p, r, q) in enumerate(zip(p_logs, rs, qs)):
        w *= q / p
        if len(ci._impl) <= i:
            ci._impl.append(cressieread.IntervalImpl(ci.wmin ** (i + 1), ci.wmax ** (i + 1),
                                                     ci.rmin, ci.rmax, ci.empirical_r_bounds))
        try:
            ci._impl[i].add(w, r, p_drop, None)
        except ValueError:
            t["pdis_broken"].add(i)


def slot_ids(line):
    """The multislot estimator's slot ids, as fb names them: the slot's
    `_id`, or `#N` by position where the log has none (fb convert then
    writes the event id)."""
    return [s["_id"] if s.get("_id") and s["_id"] != line["EventId"]
            else (f"#{i}" if i < 16 else "#16+")
            for i, s in enumerate(line["_outcomes"])]


def multislot_add(t, ids, p_logs, rs, qs, p_drop):
    """multislot.Estimator.add_example, and Interval.add_example slot by
    slot as pdis_add does (a slot whose reward is outside [0, 1] is
    marked: fb gives it, and the pooled figure, no interval)."""
    t["ms"].add_example(ids, p_logs, rs, qs)
    ci = t["ms_ci"]
    ci.n += 1
    w = 1.0
    for sid, p, r, q in zip(ids, p_logs, rs, qs):
        w *= q / p
        if sid not in ci._impl:
            ci._impl[sid] = cressieread.IntervalImpl(0, math.inf, ci.rmin, ci.rmax,
                                                     ci.empirical_r_bounds)
        try:
            ci._impl[sid].add(w, r, p_drop, None)
        except ValueError:
            t["ms_broken"].add(sid)


def pair_or_none(v):
    if v is None or any(x is None or math.isnan(float(x)) for x in v):
        return None
    return [float(x) for x in v]


def multislot_figures(t):
    est, ci, broken = t["ms"], t["ms_ci"], t["ms_broken"]
    imp, rgi, r = est.get_impression(), est.get_r_given_impression(), est.get_r()
    imp_ci = ci.get_impression()
    slots = []
    for sid in est._impl:
        rgi_ci = None if sid in broken else pair_or_none(ci._impl[sid].get())
        i_ci = pair_or_none(imp_ci[sid])
        slots.append({"slot_id": sid, "impression": imp[sid], "impression_ci95": i_ci,
                      "r_given_impression": rgi[sid], "r_given_impression_ci95": rgi_ci,
                      "r": r[sid],
                      "r_ci95": None if i_ci is None or rgi_ci is None
                      else [i_ci[0] * rgi_ci[0], i_ci[1] * rgi_ci[1]]})
    return {"slots": slots,
            "r_overall": est.get_r_overall() if est._impl else None,
            "r_overall_ci95": None if broken or not est._impl
            else pair_or_none(ci.get_r_overall())}


def estimate(kind, lines, policies, predictions):
    """Per policy, the figures vw-estimators gives."""
    per = {}
    for pol in policies:
        if kind in ("cb", "multistep"):
            per[pol] = {"b": Bandit()}
        elif kind == "ccb":
            per[pol] = {"fs": Bandit(first=True),
                        "pdis": pdis_cressieread.Estimator(), "pdis_ci": pdis_cressieread.Interval(),
                        "pdis_broken": set(), "ms": multislot.Estimator(),
                        "ms_ci": multislot.Interval(), "ms_broken": set()}
        elif kind == "ca":
            per[pol] = {"b": Bandit()}
        else:
            per[pol] = {"pi": pseudo_inverse.Estimator(), "g": slates_gaussian.Interval()}
    num_actions, bandwidth, lo, hi = CATS
    cats = CatsTransformer(num_actions, bandwidth, hi, lo)
    for n, line in enumerate(lines):
        dists = predictions[n] if predictions is not None else None
        if line.get("_skipLearn"):
            continue
        p_drop = f32(line.get("pdrop", 0.0))
        if kind in ("cb", "multistep"):
            p_log, r = f32(line["p"][0]), -f32(line["_original_label_cost"])
            if not p_log > 0 or not p_drop < 1:
                continue
            for pol, t in per.items():
                d = dists[0] if pol.startswith("predictions:") else None
                q = policy_p(pol, line["a"], p_log, 1, d, True)
                t["b"].add(p_log, r, q, p_drop)
        elif kind == "ca":
            ca = line["_label_ca"]
            p_log, r, a = f32(ca["pdf_value"]), -f32(ca["cost"]), f32(ca["action"])
            if not p_log > 0 or not p_drop < 1:
                continue
            for pol, t in per.items():
                if pol == "logged":
                    q = p_log
                elif pol == "uniform":
                    # fb's own uniform density over [min, max].
                    q = 1.0 / (hi - lo)
                else:
                    if pol == "baseline":
                        pred = cats.get_baseline1_prediction()
                    elif pol.startswith("constant:"):
                        pred = float(pol.split(":", 1)[1])
                    else:
                        pred = dists
                    q = cats.transform({"a": a}, pred)["pred_p"]
                t["b"].add(p_log, r, q, p_drop)
        elif kind == "ccb":
            slots = line["_outcomes"]
            p_logs = [f32(s["_p"][0]) for s in slots]
            rs = [-f32(s["_original_label_cost"]) for s in slots]
            if not all(p > 0 for p in p_logs) or not p_drop < 1:
                continue
            ba = line.get("_ba", [])
            for pol, t in per.items():
                qs = [policy_p(pol, s["_a"], p_logs[i], ba[i] if i < len(ba) else 0,
                               dists[i] if pol.startswith("predictions:") else None, False)
                      for i, s in enumerate(slots)]
                t["fs"].add(p_logs, rs, qs, p_drop)
                t["pdis"].add_example(p_logs, rs, qs)
                pdis_add(t, p_logs, rs, qs, p_drop)
                multislot_add(t, slot_ids(line), p_logs, rs, qs, p_drop)
        else:
            slots = line["_outcomes"]
            p_logs = [f32(s["_p"][0]) for s in slots]
            r = -f32(line["_label_cost"])
            if not all(p > 0 for p in p_logs) or not p_drop < 1:
                continue
            for pol, t in per.items():
                qs = [policy_p(pol, s["_a"], p_logs[i], 0,
                               dists[i] if pol.startswith("predictions:") else None, False)
                      for i, s in enumerate(slots)]
                t["pi"].add_example(p_logs, r, qs)
                t["g"].add_example(p_logs, r, qs)
    out = {}
    for pol, t in per.items():
        if kind in ("cb", "multistep", "ca"):
            out[pol] = t["b"].figures()
        elif kind == "ccb":
            fs = t["fs"].figures()
            est, ci = t["pdis"].get(), t["pdis_ci"].get()
            fs["slots"] = [{"cressie_read": e,
                            "cressie_read_ci95": None if j in t["pdis_broken"]
                            else [float(x) for x in ci[j]]}
                           for j, e in enumerate(est)]
            fs["multislot"] = multislot_figures(t)
            out[pol] = fs
        else:
            g = t["g"].get()
            out[pol] = {"pseudo_inverse": t["pi"].get(),
                        "pseudo_inverse_gaussian_ci95": None if g[0] is None else [float(x) for x in g]}
    return out


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=REL, abs_tol=ABS)


class Tally:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def check(self, name, got, want):
        if same(got, want):
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name}: fb {got!r}, vw-estimators {want!r}")


def compare(t, name, fb_kind, kind, want, policies):
    for i, pol in enumerate(policies):
        got = fb_kind["policies"][i]
        assert got["policy"] == pol, (got["policy"], pol)
        w = want[pol]
        if kind == "ccb":
            g = got["first_slot"]
            for k in ("ips", "snips", "cressie_read", "cressie_read_ci95", "gaussian_ci95",
                      "clopper_pearson_ci95"):
                t.check(f"{name} {pol} first slot {k}", g[k], w[k])
            t.check(f"{name} {pol} slots", len(got["slots"]), len(w["slots"]))
            for j, (gs, ws) in enumerate(zip(got["slots"], w["slots"])):
                for k in ("cressie_read", "cressie_read_ci95"):
                    t.check(f"{name} {pol} slot {j} {k}", gs[k], ws[k])
            gm, wm = got["multislot"], w["multislot"]
            for k in ("r_overall", "r_overall_ci95"):
                t.check(f"{name} {pol} multislot {k}", gm[k], wm[k])
            t.check(f"{name} {pol} multislot slot ids", [s["slot_id"] for s in gm["slots"]],
                    [s["slot_id"] for s in wm["slots"]])
            for gs, ws in zip(gm["slots"], wm["slots"]):
                for k, v in ws.items():
                    if k != "slot_id":
                        t.check(f"{name} {pol} multislot {ws['slot_id']} {k}", gs[k], v)
        else:
            for k, v in w.items():
                t.check(f"{name} {pol} {k}", got[k], v)


def check_log(t, fb, name, logs, flags, extra_policies=(), predictions_for=None):
    v = json.loads(run(fb, "evaluate", "-q", "--json", *CATS_FLAG, *flags, *logs))
    for kind in v["by_problem_type"]:
        policies = ["logged", "baseline", "uniform"]
        pflags = ["--policy", "baseline", "--policy", "uniform"]
        if predictions_for == kind:
            policies += list(extra_policies)
            for p in extra_policies:
                pflags += ["--policy", p]
        if kind == "slates":
            # Slates lines carry no baseline actions: the baseline is left
            # to the unit tests.
            policies.remove("baseline")
            pflags = pflags[2:]
        if kind == "ca":
            policies.append(CA_CONSTANT)
            pflags += ["--policy", CA_CONSTANT]
        only = ["--only", kind]
        got = json.loads(run(fb, "evaluate", "-q", "--json", *CATS_FLAG, *only, *pflags, *flags,
                             *logs))
        lines = lines_of(fb, logs, [*only, *flags])
        preds = None
        for p in extra_policies:
            if predictions_for == kind:
                path = p.split(":", 1)[1]
                preds = read_ca_predictions(path) if kind == "ca" else read_predictions(path)
        want = estimate(kind, lines, policies, preds)
        compare(t, f"{name} [{kind}]", got["by_problem_type"][kind], kind, want, policies)


def vw_predictions(fb, vw_python, scratch, kind, vw_args):
    """Generates a log, trains VW on its first piece, predicts the rest;
    returns (the rest's logs, the predictions file)."""
    log = os.path.join(scratch, f"vw-{kind}.fb")
    run(fb, "gen", "-q", "--force", "--problem-type", kind, "--events", "400", "--seed", "11",
        "--reward", "bernoulli:0.3", "-o", log)
    pieces = os.path.join(scratch, f"vw-{kind}-pieces")
    os.makedirs(pieces, exist_ok=True)
    size = os.path.getsize(log)
    run(fb, "split", "-q", "--force", log, "--max-size", str(size // 2 + 1), "-o", pieces)
    parts = sorted(os.path.join(pieces, p) for p in os.listdir(pieces) if p.endswith(".fb"))
    train, rest = parts[0], parts[1:]
    train_json = os.path.join(scratch, f"vw-{kind}-train.dsjson")
    test_json = os.path.join(scratch, f"vw-{kind}-test.dsjson")
    run(fb, "convert", "-q", "--force", "--skip-learn", "exclude", train, "-o", train_json)
    run(fb, "convert", "-q", "--force", "--skip-learn", "exclude", *rest, "-o", test_json)
    model = os.path.join(scratch, f"vw-{kind}.model")
    pred = os.path.join(scratch, f"vw-{kind}.pred")
    script = (
        "import sys\nfrom vowpalwabbit import Workspace\n"
        "a, tr, te, m, p = sys.argv[1:6]\n"
        "w = Workspace(f'{a} --dsjson --quiet -d {tr} -f {m}'); w.run_parser(); w.finish()\n"
        "w = Workspace(f'-t -i {m} --dsjson --quiet -d {te} -p {p}'); w.run_parser(); w.finish()\n"
    )
    run(vw_python, "-c", script, vw_args, train_json, test_json, model, pred)
    return rest, pred


def main():
    fb, data, scratch, vw_python = sys.argv[1:5]
    os.makedirs(scratch, exist_ok=True)
    t = Tally()
    with open(os.path.join(data, "expected", "MANIFEST.tsv"), encoding="utf-8") as f:
        rows = [l.rstrip("\n").split("\t") for l in f if l.strip() and not l.startswith("#")]
    for rel, flags, _ in rows:
        if rel.startswith("invalid_joined_logs/"):
            continue
        flags = [] if flags == "-" else flags.split()
        check_log(t, fb, rel, [os.path.join(data, rel)], flags)
    for kind, extra in [("cb", []), ("ccb", []), ("slates", []), ("multistep", ["--multistep"]),
                        ("ca", [])]:
        log = os.path.join(scratch, f"gen-{kind}.fb")
        run(fb, "gen", "-q", "--force", "--problem-type", kind, "--events", "300", "--seed", "5",
            "--reward", "bernoulli:0.4", "--pass-probability", "0.75", "-o", log)
        check_log(t, fb, f"generated {kind}", [log], extra)
    for kind, args in [("cb", "--cb_explore_adf"), ("ccb", "--ccb_explore_adf"),
                       ("slates", "--slates"),
                       ("ca", "--cats {} --bandwidth {} --min_value {} --max_value {}".format(*CATS))]:
        rest, pred = vw_predictions(fb, vw_python, scratch, kind, args)
        check_log(t, fb, f"VW predictions {kind}", rest, ["--skip-learn", "exclude"],
                  [f"predictions:{pred}"], kind)
    print(f"{t.passed} passed, {t.failed} failed")
    sys.exit(1 if t.failed or not t.passed else 0)


if __name__ == "__main__":
    main()
