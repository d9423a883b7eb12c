//! `fb stats`: what is in a set of logs, in one table (or JSON).

use std::path::PathBuf;
use std::process::ExitCode;

use fb_join::{Decision, EventKind, JoinedEvent, Joiner, Metrics};
use serde_json::{json, Value};

use crate::error::Error;
use crate::estimate::{Estimates, Estimator, Sample};
use crate::joinargs::{drive, JoinArgs};
use crate::output::Output;
use crate::Global;

/// Arguments of `fb stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Logs to read (files, directories, `-` for stdin), as one stream.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub join: JoinArgs,
}

/// One decision as the counterfactual estimates see it.
fn sample(ev: &JoinedEvent) -> Option<Sample> {
    if ev.skip_learn || ev.pass_probability <= 0.0 {
        return None;
    }
    let weight = 1.0 / f64::from(ev.pass_probability);
    match &ev.decision {
        // CB and multistep steps: the baseline always takes action 1.
        Decision::Cb {
            actions,
            probabilities,
        } => Some(Sample {
            reward: f64::from(ev.original_reward),
            probability: f64::from(*probabilities.first()?),
            baseline: *actions.first()? == 1,
            weight,
        }),
        // CCB and Slates: the first slot, against its baseline action (the
        // logged one, else action 0).
        Decision::MultiSlot { slots, baseline } => {
            let slot = slots.first()?;
            let reward = if ev.kind == EventKind::Ccb {
                slot.original_reward
            } else {
                ev.original_reward
            };
            Some(Sample {
                reward: f64::from(reward),
                probability: f64::from(*slot.probabilities.first()?),
                baseline: i64::from(*slot.actions.first()?)
                    == i64::from(baseline.first().copied().unwrap_or(0)),
                weight,
            })
        }
        Decision::Ca { .. } => None,
    }
}

fn time(t: &Option<(String, fb_schema::TimeStamp)>) -> Value {
    match t {
        Some((id, ts)) => {
            let mut text = Vec::new();
            fb_join::time::push_timestamp(&mut text, ts, fb_join::Compat::Sane);
            let text = String::from_utf8_lossy(&text).trim_matches('"').to_string();
            json!({"event_id": id, "time": text})
        }
        None => Value::Null,
    }
}

fn estimate_json(e: &Estimates) -> Value {
    let one = |x: Option<crate::estimate::Estimate>| match x {
        Some(x) => json!({"value": x.value, "ci95": [x.low, x.high]}),
        None => Value::Null,
    };
    json!({"decisions": e.count, "logged_policy_reward": one(e.logged), "baseline_ips": one(e.ips), "baseline_snips": one(e.snips)})
}

/// Builds the JSON report (the table is printed from it too).
fn report_json(
    inputs: usize,
    run: &crate::joinargs::RunReport,
    m: &Metrics,
    joiner: &Joiner,
    estimates: &Estimates,
) -> Value {
    let diags = joiner.diagnostics();
    let skipped: serde_json::Map<String, Value> = diags
        .counts()
        .iter()
        .map(|(k, v)| (k.name().to_string(), json!(v)))
        .collect();
    let by_kind: serde_json::Map<String, Value> = m
        .by_kind()
        .map(|(k, v)| {
            let mean = if v.events > 0 {
                v.reward_sum / v.events as f64
            } else {
                0.0
            };
            (
                k.to_string(),
                json!({"events": v.events, "learnable": v.learnable, "reward_sum": v.reward_sum,
                       "reward_mean": mean, "cost_sum": -v.reward_sum,
                       "original_reward_sum": v.original_reward_sum}),
            )
        })
        .collect();
    json!({
        "inputs": inputs,
        "bytes": run.bytes,
        "messages": run.messages,
        "events_read": m.events_read,
        "joined": m.joined,
        "learnable": m.joined - m.skipped_learn,
        "not_learnable": m.skipped_learn,
        "outcomes": m.outcomes,
        "activations": m.activations,
        "first": time(&m.first),
        "last": time(&m.last),
        "cost_sum": m.cost_sum,
        "original_cost_sum": m.original_cost_sum,
        "by_problem_type": by_kind,
        "skipped_by_reason": skipped,
        "damaged_inputs": run.damaged,
        "reference_metrics": {
            "not_learnable": m.skipped_learn,
            "original_cost_sum": m.original_cost_sum,
            "zero_action_events": m.zero_actions,
            "cb_baseline_events": m.cb_baseline_count,
            "cb_baseline_original_cost_sum": m.cb_baseline_original_cost_sum,
            "first_slot_original_cost_sum": m.first_slot_original_cost_sum,
            "first_slot_equal_baseline": m.first_slot_equal_baseline,
            "first_slot_not_equal_baseline": m.first_slot_not_equal_baseline,
            "first_slot_equal_baseline_cost_sum": m.first_slot_equal_baseline_cost_sum,
        },
        "counterfactual": estimate_json(estimates),
    })
}

fn fmt_value(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_f64() => format!("{:.6}", n.as_f64().unwrap_or(0.0)),
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

fn table(r: &Value) -> String {
    let text = std::cell::RefCell::new(String::new());
    let row = |k: &str, v: String| {
        use std::fmt::Write as _;
        let _ = writeln!(text.borrow_mut(), "{k:<36} {v}");
    };
    row("inputs", fmt_value(&r["inputs"]));
    row("bytes read", fmt_value(&r["bytes"]));
    if let Some(msgs) = r["messages"].as_object() {
        let parts: Vec<String> = msgs.iter().map(|(k, v)| format!("{k} {v}")).collect();
        row("messages", parts.join(", "));
    }
    row("events read", fmt_value(&r["events_read"]));
    row("events joined", fmt_value(&r["joined"]));
    row("  learnable", fmt_value(&r["learnable"]));
    row(
        "  not learnable (skip-learn)",
        fmt_value(&r["not_learnable"]),
    );
    row("outcomes", fmt_value(&r["outcomes"]));
    row("  activations", fmt_value(&r["activations"]));
    for end in ["first", "last"] {
        let v = &r[end];
        row(
            &format!("{end} event"),
            if v.is_null() {
                "-".into()
            } else {
                format!("{} at {}", fmt_value(&v["event_id"]), fmt_value(&v["time"]))
            },
        );
    }
    row("cost sum", fmt_value(&r["cost_sum"]));
    row("original cost sum", fmt_value(&r["original_cost_sum"]));
    if let Some(kinds) = r["by_problem_type"].as_object() {
        for (k, v) in kinds {
            row(
                k,
                format!(
                    "{} events, {} learnable, reward sum {}, mean {}",
                    v["events"],
                    v["learnable"],
                    fmt_value(&v["reward_sum"]),
                    fmt_value(&v["reward_mean"])
                ),
            );
        }
    }
    if let Some(skipped) = r["skipped_by_reason"].as_object() {
        if skipped.is_empty() {
            row("skipped", "nothing".into());
        }
        for (k, v) in skipped {
            row(&format!("skipped: {k}"), v.to_string());
        }
    }
    if let Some(m) = r["reference_metrics"].as_object() {
        for (k, v) in m {
            row(&format!("metric: {k}"), fmt_value(v));
        }
    }
    let c = &r["counterfactual"];
    row("counterfactual: decisions", fmt_value(&c["decisions"]));
    for (key, label) in [
        ("logged_policy_reward", "logged policy average reward"),
        ("baseline_ips", "baseline policy reward (IPS)"),
        ("baseline_snips", "baseline policy reward (SNIPS)"),
    ] {
        let e = &c[key];
        row(
            label,
            if e.is_null() {
                "-".into()
            } else {
                format!(
                    "{} (95% CI {} .. {})",
                    fmt_value(&e["value"]),
                    fmt_value(&e["ci95"][0]),
                    fmt_value(&e["ci95"][1])
                )
            },
        );
    }
    text.into_inner()
}

/// Prints the statistics; exit 1 when an input was damaged.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let inputs = crate::input::resolve(&args.inputs)?;
    let mut joiner = Joiner::new(args.join.options());
    let mut estimator = Estimator::default();
    let run = drive(&inputs, &mut joiner, global.quiet, |ev| {
        if let Some(s) = sample(ev) {
            estimator.add(s);
        }
        Ok(())
    })?;
    let report = report_json(
        inputs.len(),
        &run,
        joiner.metrics(),
        &joiner,
        &estimator.finish(),
    );
    if run.logs == 0 {
        // Nothing was a log: a table of zeros would read as an empty log.
        if !global.quiet {
            eprintln!("fb: no input is a joined log: no statistics to show");
        }
        return Ok(ExitCode::from(1));
    }
    let text = if args.json {
        format!("{report}\n")
    } else {
        table(&report)
    };
    let mut out = Output::stdout();
    out.put(text.as_bytes())?;
    out.finish()?;
    Ok(run.exit_code())
}
