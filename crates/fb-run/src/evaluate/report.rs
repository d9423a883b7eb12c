//! What an evaluation says: the JSON every face shows (the command
//! line's table and CSV are printed from it, Python reads it), with the
//! warnings that say where an estimate cannot be trusted.

use serde_json::{json, Map, Value};

use super::estimators::{BanditFigures, ALPHA};
use super::multislot::MultislotFigures;
use super::run::{Evaluation, Kind, KindTally, Tallies};

/// Decisions under which an interval is too rough to read much into.
pub const FEW: u64 = 30;

/// A logged probability under this makes weights of over 1000.
pub const TINY: f64 = 1e-3;

/// An effective sample size under this share of the decisions means the
/// estimate rests on a few of them.
pub const UNEVEN: f64 = 0.1;

/// What the figures are, said in the output.
pub const METHOD: &str = "the definitions of vw-estimators 0.2.2 (docs/evaluate.md): each \
    learnable decision gives the logged probability p of the action taken, its reward r (the \
    original reward: before apprentice mode and multistep transforms) and the target policy's \
    probability q of that action; w = q / p. IPS = Σ w r / n; SNIPS = Σ w r / Σ w; Cressie-Read \
    is the power-divergence (-2) estimate with its interval; the Gaussian interval is around \
    IPS with decisions counted 1/pass_probability times; Clopper-Pearson and Cressie-Read \
    intervals need rewards in [0, 1]. CCB: the first slot as CB, and each slot's per-decision \
    Cressie-Read (weights multiplied along the slots), and the multislot estimator: per slot \
    id its impression (share of decisions showing it, Clopper-Pearson interval), its \
    Cressie-Read reward given impression, their product, and the reward of all slots pooled. \
    Slates: the pseudo-inverse estimator, \
    w = 1 - K + Σ_k q_k / p_k, with a Gaussian interval. CA (with CATS parameters): p is the \
    logged density and q the target's by vw-estimators' CATS transformer, then as CB. All \
    intervals are 95%";

/// Why CA decisions were counted, not estimated.
pub const CA_WHY: &str = "CA decisions need the model's CATS parameters: fb evaluate --cats \
    NUM_ACTIONS,BANDWIDTH,MIN,MAX (vwlogs.evaluate(cats=...))";

fn pair(x: Option<[f64; 2]>) -> Value {
    x.map_or(Value::Null, |[a, b]| json!([a, b]))
}

fn multislot_json(f: &MultislotFigures) -> Value {
    let slots: Vec<Value> = f
        .slots
        .iter()
        .map(|s| {
            json!({
                "slot_id": s.id,
                "decisions": s.decisions,
                "impression": s.impression,
                "impression_ci95": pair(s.impression_ci),
                "r_given_impression": s.r_given_impression,
                "r_given_impression_ci95": pair(s.r_given_impression_ci),
                "r": s.r,
                "r_ci95": pair(s.r_ci),
            })
        })
        .collect();
    json!({
        "slots": slots,
        "r_overall": f.r_overall,
        "r_overall_ci95": pair(f.r_overall_ci),
        "slots_left_out": f.left_out,
    })
}

fn bandit_json(f: &BanditFigures) -> Value {
    json!({
        "ips": f.ips,
        "snips": f.snips,
        "snips_ci95": pair(f.snips_ci),
        "cressie_read": f.cressie_read,
        "cressie_read_ci95": pair(f.cressie_read_ci),
        "gaussian_ci95": pair(f.gaussian_ci),
        "clopper_pearson_ci95": pair(f.clopper_pearson_ci),
        "effective_sample_size": f.effective_sample_size,
        "unsupported_weight": f.unsupported,
    })
}

/// The warnings of one policy's figures.
fn policy_warnings(f: &BanditFigures, logged: bool) -> Vec<String> {
    let mut w = Vec::new();
    let n = f.decisions as f64;
    if f.unsupported > 0.0 && n > 0.0 {
        w.push(format!(
            "the policy puts {:.4} of its weight ({:.2}% of the decisions' worth) on actions the \
             logging policy never takes (probability 0): no estimate sees what they would do",
            f.unsupported,
            100.0 * f.unsupported / n
        ));
    }
    if !logged && n > 0.0 && f.effective_sample_size < UNEVEN * n {
        w.push(format!(
            "effective sample size {:.1} of {} decisions: the estimate rests on a few decisions",
            f.effective_sample_size, f.decisions
        ));
    }
    if f.rewards_outside_unit > 0 {
        w.push(format!(
            "{} with a reward outside [0, 1]: no Cressie-Read or Clopper-Pearson interval \
             (both assume rewards in [0, 1])",
            crate::plural(f.rewards_outside_unit, "decision")
        ));
    }
    w
}

fn kind_warnings(k: &KindTally) -> Vec<String> {
    let mut w = Vec::new();
    if k.decisions < FEW {
        w.push(format!(
            "only {}: the intervals are too rough to read much into",
            crate::plural(k.decisions, "decision")
        ));
    }
    if k.min_p < TINY {
        w.push(format!(
            "the smallest logged probability is {:e}: weights up to {:.0} let a few decisions \
             swing the estimates",
            k.min_p,
            1.0 / k.min_p
        ));
    }
    if k.left_out > 0 {
        w.push(format!(
            "{} left out: a logged probability or pass_probability of 0 (an infinite weight)",
            crate::plural(k.left_out, "learnable decision")
        ));
    }
    w
}

fn kind_json(kind: Kind, k: &KindTally, names: &[String]) -> Value {
    let policies: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let logged = i == 0;
            let mut o = Map::new();
            o.insert("policy".into(), json!(name));
            match kind {
                Kind::Cb | Kind::Multistep | Kind::Ca => {
                    let f = k.bandit.get(i).map(|b| b.finish()).unwrap_or_default();
                    if let Value::Object(m) = bandit_json(&f) {
                        o.extend(m);
                    }
                    o.insert("warnings".into(), json!(policy_warnings(&f, logged)));
                }
                Kind::Ccb => {
                    let f = k.bandit.get(i).map(|b| b.finish()).unwrap_or_default();
                    o.insert("first_slot".into(), bandit_json(&f));
                    let slots: Vec<Value> = k
                        .slots
                        .get(i)
                        .map(|s| s.finish())
                        .unwrap_or_default()
                        .iter()
                        .enumerate()
                        .map(|(n, s)| {
                            json!({"slot": n, "decisions": s.decisions,
                                   "cressie_read": s.value, "cressie_read_ci95": pair(s.ci)})
                        })
                        .collect();
                    o.insert("slots".into(), json!(slots));
                    let m = k.multislot.get(i).map(|m| m.finish()).unwrap_or_default();
                    o.insert("multislot".into(), multislot_json(&m));
                    let mut warnings = policy_warnings(&f, logged);
                    if m.left_out > 0 {
                        warnings.push(format!(
                            "{} past the first {} slot ids left out of the multislot estimator",
                            crate::plural(m.left_out, "slot"),
                            super::multislot::MAX_SLOT_IDS
                        ));
                    }
                    o.insert("warnings".into(), json!(warnings));
                }
                Kind::Slates => {
                    let f = k.slates.get(i).map(|s| s.finish()).unwrap_or_default();
                    o.insert("pseudo_inverse".into(), json!(f.value));
                    o.insert("pseudo_inverse_gaussian_ci95".into(), pair(f.gaussian_ci));
                    o.insert("warnings".into(), json!(Vec::<String>::new()));
                }
            }
            Value::Object(o)
        })
        .collect();
    json!({
        "decisions": k.decisions,
        "left_out": k.left_out,
        "smallest_logged_probability": (k.min_p.is_finite()).then_some(k.min_p),
        "warnings": kind_warnings(k),
        "policies": policies,
    })
}

/// The figures of `t` per problem type (those with decisions).
pub fn tallies_json(t: &Tallies, names: &[String]) -> Value {
    let mut by = Map::new();
    for kind in Kind::ALL {
        if let Some(k) = t.kind(kind).filter(|k| k.decisions + k.left_out > 0) {
            by.insert(kind.name().into(), kind_json(kind, k, names));
        }
    }
    Value::Object(by)
}

/// `2021-05-18T13:00:00Z`.
pub fn window_start(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds).map_or_else(|_| seconds.to_string(), |t| t.to_string())
}

/// The whole report of an evaluation.
pub fn report_json(e: &Evaluation) -> Value {
    let names = e.names();
    let t = &e.total;
    let mut v = json!({
        "policies": names,
        "alpha": ALPHA,
        "method": METHOD,
        "events": e.events(),
        "not_estimated": {
            "ca": t.ca,
            "not_learnable": t.not_learnable,
            "ca_why": (t.ca > 0).then_some(CA_WHY),
        },
        "cats": e.cats().map(|c| json!({
            "num_actions": c.num_actions, "bandwidth": c.bandwidth, "min": c.min, "max": c.max,
        })),
        "by_problem_type": tallies_json(t, &names),
    });
    if !e.windows.is_empty() {
        let windows: Vec<Value> = e
            .windows
            .iter()
            .map(|(s, w)| json!({"start": window_start(*s), "by_problem_type": tallies_json(w, &names)}))
            .collect();
        if let Some(o) = v.as_object_mut() {
            o.insert("windows".into(), json!(windows));
        }
    }
    v
}

/// A slot id as part of an estimator's name: letters, digits, `-`, `.`,
/// `#` kept, anything else (a CSV separator or quote) made `_`. The JSON
/// keeps the id as the log has it.
fn csv_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '#' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One row of the tidy table (`--by ... --format csv`): a window, a
/// problem type, a policy and one estimator's value and interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Window start (RFC 3339), or empty for the whole run.
    pub window: String,
    /// Problem type.
    pub problem_type: String,
    /// Policy.
    pub policy: String,
    /// Estimator name.
    pub estimator: String,
    /// Decisions.
    pub decisions: f64,
    /// Value (None for an interval alone).
    pub value: Option<f64>,
    /// Interval.
    pub ci: Option<[f64; 2]>,
}

/// The rows of one window's JSON (as [`tallies_json`] makes it).
pub fn rows(window: &str, by: &Value, out: &mut Vec<Row>) {
    let num = |v: &Value| v.as_f64();
    let ci = |v: &Value| Some([v.get(0)?.as_f64()?, v.get(1)?.as_f64()?]);
    let Some(by) = by.as_object() else {
        return;
    };
    for (kind, k) in by {
        let decisions = num(&k["decisions"]).unwrap_or(0.0);
        for p in k["policies"].as_array().into_iter().flatten() {
            let policy = p["policy"].as_str().unwrap_or("").to_string();
            let mut push =
                |estimator: String, value: Option<f64>, interval: Option<[f64; 2]>, n: f64| {
                    out.push(Row {
                        window: window.into(),
                        problem_type: kind.clone(),
                        policy: policy.clone(),
                        estimator,
                        decisions: n,
                        value,
                        ci: interval,
                    });
                };
            let b = if kind == "ccb" { &p["first_slot"] } else { p };
            if kind == "slates" {
                push(
                    "pseudo_inverse".into(),
                    num(&p["pseudo_inverse"]),
                    ci(&p["pseudo_inverse_gaussian_ci95"]),
                    decisions,
                );
                continue;
            }
            push(
                "ips".into(),
                num(&b["ips"]),
                ci(&b["gaussian_ci95"]),
                decisions,
            );
            push("snips".into(), num(&b["snips"]), None, decisions);
            push(
                "cressie_read".into(),
                num(&b["cressie_read"]),
                ci(&b["cressie_read_ci95"]),
                decisions,
            );
            push(
                "clopper_pearson".into(),
                None,
                ci(&b["clopper_pearson_ci95"]),
                decisions,
            );
            for s in p["slots"].as_array().into_iter().flatten() {
                push(
                    format!("slot_{}_cressie_read", s["slot"]),
                    num(&s["cressie_read"]),
                    ci(&s["cressie_read_ci95"]),
                    num(&s["decisions"]).unwrap_or(0.0),
                );
            }
            let m = &p["multislot"];
            if m.is_object() {
                push(
                    "multislot_r_overall".into(),
                    num(&m["r_overall"]),
                    ci(&m["r_overall_ci95"]),
                    decisions,
                );
            }
            for s in m["slots"].as_array().into_iter().flatten() {
                let id = csv_name(s["slot_id"].as_str().unwrap_or(""));
                let n = num(&s["decisions"]).unwrap_or(0.0);
                for what in ["impression", "r_given_impression", "r"] {
                    push(
                        format!("multislot_{id}_{what}"),
                        num(&s[what]),
                        ci(&s[format!("{what}_ci95").as_str()]),
                        n,
                    );
                }
            }
        }
    }
}
