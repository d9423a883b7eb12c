//! `fb stats`: what is in a set of logs, in one table (or JSON).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use fb_join::{Decision, JoinedEvent, Joiner, Metrics, Problem};
use serde_json::{json, Value};

use crate::error::Error;
use crate::estimate::{Estimate, Estimates, Estimator, Sample};
use crate::joinargs::{feed_all, FilterArgs, JoinArgs, RunReport};
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

    /// How to join.
    #[command(flatten)]
    pub join: JoinArgs,

    /// Which events to keep.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Keep going past damage, as `fb convert --recover` does: resume at
    /// the next plausible message, and count the good events of damaged
    /// batches (`salvaged` in the output).
    #[arg(long)]
    pub recover: bool,
}

/// Decisions under which an interval is too rough to read much into.
const FEW: usize = 30;

/// Slots given an estimate of their own; later ones are left out (a
/// damaged or odd log could claim thousands).
const MAX_SLOTS: usize = 16;

/// What the baseline policy is, and how the estimates are made: said in
/// the output so that it reads without this code.
const BASELINE: &str = "CB and multistep steps: action 1 (the first action the context offers); \
    CCB and Slates: in each slot, the baseline action the log records for it (action 0 where none \
    is recorded)";
const METHOD: &str = "every learnable decision with a pass_probability above 0 counts with \
    weight 1/pass_probability (one with pass_probability 0 would weigh infinitely: it is left \
    out, and counted); rewards are original rewards, the reward function over the decision's \
    own outcomes before apprentice mode and multistep transforms; the logged policy's value is \
    their weighted mean; IPS weights each reward by [taken == baseline] / p(taken) and divides \
    by the decisions, SNIPS by the sum of those weights; 95% intervals are normal \
    approximations (1.96 standard errors)";

fn weight(ev: &JoinedEvent) -> Option<f64> {
    (!ev.skip_learn && ev.pass_probability > 0.0).then(|| 1.0 / f64::from(ev.pass_probability))
}

/// Running estimates per problem type, and per slot for CCB and Slates.
#[derive(Default)]
pub struct Estimators {
    cb: Estimator,
    multistep: Estimator,
    ccb_slots: Vec<Estimator>,
    slates: Estimator,
    slates_slots: Vec<Estimator>,
    /// Learnable decisions left out for their pass_probability of 0 (or
    /// below).
    zero_pass: u64,
}

impl Estimators {
    fn merge(&mut self, o: &Self) {
        self.cb.merge(&o.cb);
        self.multistep.merge(&o.multistep);
        self.slates.merge(&o.slates);
        self.zero_pass += o.zero_pass;
        for (mine, theirs) in [
            (&mut self.ccb_slots, &o.ccb_slots),
            (&mut self.slates_slots, &o.slates_slots),
        ] {
            if mine.len() < theirs.len() {
                mine.resize_with(theirs.len(), Estimator::default);
            }
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.merge(b);
            }
        }
    }

    fn add(&mut self, ev: &JoinedEvent) {
        let Some(weight) = weight(ev) else {
            let estimated = !matches!(ev.decision, Decision::Ca { .. });
            self.zero_pass += u64::from(!ev.skip_learn && estimated);
            return;
        };
        match &ev.decision {
            Decision::Cb {
                actions,
                probabilities,
            } => {
                let (Some(&a), Some(&p)) = (actions.first(), probabilities.first()) else {
                    return;
                };
                let sample = Sample {
                    reward: f64::from(ev.original_reward),
                    probability: f64::from(p),
                    baseline: a == 1,
                    weight,
                };
                match ev.kind {
                    Problem::Multistep => self.multistep.add(sample),
                    _ => self.cb.add(sample),
                }
            }
            Decision::MultiSlot { slots, baseline } => {
                let ccb = ev.kind == Problem::Ccb;
                let (mut joint_p, mut joint_base) = (1.0f64, true);
                for (i, slot) in slots.iter().enumerate() {
                    let (Some(&a), Some(&p)) = (slot.actions.first(), slot.probabilities.first())
                    else {
                        return;
                    };
                    let base = i64::from(a) == i64::from(baseline.get(i).copied().unwrap_or(0));
                    joint_p *= f64::from(p);
                    joint_base &= base;
                    if i >= MAX_SLOTS {
                        continue;
                    }
                    let per_slot = if ccb {
                        &mut self.ccb_slots
                    } else {
                        &mut self.slates_slots
                    };
                    if per_slot.len() <= i {
                        per_slot.resize_with(i + 1, Estimator::default);
                    }
                    per_slot[i].add(Sample {
                        reward: f64::from(if ccb {
                            slot.original_reward
                        } else {
                            ev.original_reward
                        }),
                        probability: f64::from(p),
                        baseline: base,
                        weight,
                    });
                }
                if !ccb && !slots.is_empty() {
                    self.slates.add(Sample {
                        reward: f64::from(ev.original_reward),
                        probability: joint_p,
                        baseline: joint_base,
                        weight,
                    });
                }
            }
            Decision::Ca { .. } => {}
        }
    }

    fn json(&self) -> Value {
        let mut by = serde_json::Map::new();
        for (name, e) in [("cb", &self.cb), ("multistep", &self.multistep)] {
            if e.count() > 0 {
                by.insert(name.into(), estimate_json(&e.finish(), "decisions"));
            }
        }
        if !self.ccb_slots.is_empty() {
            let slots = per_slot(&self.ccb_slots);
            by.insert(
                "ccb".into(),
                json!({"covers": "each slot on its own: its reward, its logged probability, its baseline action", "slots": slots}),
            );
        }
        if self.slates.count() > 0 {
            let mut v = estimate_json(&self.slates.finish(), "decisions");
            v["covers"] = json!(
                "the whole slate: its reward, the product of the slots' probabilities, baseline \
                 when every slot takes its baseline action"
            );
            v["slots"] = per_slot(&self.slates_slots);
            by.insert("slates".into(), v);
        }
        json!({"baseline_policy": BASELINE, "method": METHOD,
               "left_out_pass_probability_0": self.zero_pass, "by_problem_type": by})
    }
}

/// One estimate per slot, each with its slot number.
fn per_slot(slots: &[Estimator]) -> Value {
    slots
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut v = estimate_json(&e.finish(), "decisions");
            v["slot"] = json!(i);
            v
        })
        .collect()
}

fn estimate_json(e: &Estimates, count: &str) -> Value {
    let one = |x: Option<Estimate>| match x {
        Some(x) => json!({"value": x.value, "ci95": [x.low, x.high]}),
        None => Value::Null,
    };
    let mut v = json!({
        count: e.count,
        "logged_policy_reward": one(e.logged),
        "baseline_ips": one(e.ips),
        "baseline_snips": one(e.snips),
    });
    if e.count < FEW {
        v["warning"] = json!(format!(
            "only {}: the intervals are too rough to read much into",
            crate::plural(e.count as u64, "decision")
        ));
    }
    v
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

/// Builds the JSON report (the table is printed from it too). `kept` are
/// the metrics of the events the filters kept; `read` the joiner's own.
pub fn report_json(
    inputs: usize,
    run: &RunReport,
    joiner: &Joiner,
    kept: &Metrics,
    filtered: u64,
    estimates: &Estimators,
) -> Value {
    let read = joiner.metrics();
    let diags = joiner.diagnostics();
    let skipped: serde_json::Map<String, Value> = diags
        .counts()
        .iter()
        .map(|(k, v)| (k.name().to_string(), json!(v)))
        .collect();
    let by_kind: serde_json::Map<String, Value> = kept
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
        "logs": run.logs,
        "bytes": run.bytes,
        "messages": run.kinds.by_name().collect::<std::collections::BTreeMap<_, _>>(),
        "events_read": read.events_read,
        "joined": read.joined,
        "filtered_out": filtered,
        "not_selected": read.not_selected,
        "kept": kept.joined,
        "learnable": kept.joined - kept.skipped_learn,
        "not_learnable": kept.skipped_learn,
        "outcomes": kept.outcomes,
        "activations": kept.activations,
        "first": time(&kept.first),
        "last": time(&kept.last),
        "cost_sum": kept.cost_sum,
        "original_cost_sum": kept.original_cost_sum,
        "by_problem_type": by_kind,
        "skipped_by_reason": skipped,
        "damaged_inputs": run.damaged,
        "salvaged": {
            "messages": run.salvaged.len(),
            "events_kept": run.salvaged.iter().map(|(_, s)| s.kept).sum::<u64>(),
            "events_withheld": run.salvaged.iter().map(|(_, s)| s.withheld).sum::<u64>(),
            "events_lost": run.salvaged.iter().map(|(_, s)| s.lost_count()).sum::<u64>(),
        },
        "reference_metrics": {
            "not_learnable": kept.skipped_learn,
            "original_cost_sum": kept.original_cost_sum,
            "zero_action_events": kept.zero_actions,
            "cb_baseline_events": kept.cb_baseline_count,
            "cb_baseline_original_cost_sum": kept.cb_baseline_original_cost_sum,
            "first_slot_original_cost_sum": kept.first_slot_original_cost_sum,
            "first_slot_equal_baseline": kept.first_slot_equal_baseline,
            "first_slot_not_equal_baseline": kept.first_slot_not_equal_baseline,
            "first_slot_equal_baseline_cost_sum": kept.first_slot_equal_baseline_cost_sum,
        },
        "counterfactual": estimates.json(),
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

/// Width of the key column: the longest key of the table fits.
const KEY: usize = 40;

/// `text` wrapped at `width` columns, the lines after the first indented
/// by `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines.join(&format!("\n{indent}"))
}

fn table(r: &Value) -> String {
    let mut t = String::new();
    let mut row = |k: &str, v: String| {
        let _ = writeln!(t, "{k:<KEY$} {v}");
    };
    row(
        "inputs",
        format!(
            "{} ({} read as {})",
            fmt_value(&r["inputs"]),
            fmt_value(&r["logs"]),
            if r["logs"] == 1 { "a log" } else { "logs" }
        ),
    );
    row("bytes read", fmt_value(&r["bytes"]));
    if let Some(msgs) = r["messages"].as_object() {
        let parts: Vec<String> = msgs.iter().map(|(k, v)| format!("{k} {v}")).collect();
        row("messages", parts.join(", "));
    }
    row(
        "events read",
        format!(
            "{} (every event of REGULAR messages: decisions, outcomes, dedup, ...)",
            fmt_value(&r["events_read"])
        ),
    );
    row(
        "decisions joined",
        format!(
            "{} (decisions with their outcomes: one DSJSON line each)",
            fmt_value(&r["joined"])
        ),
    );
    if r["not_selected"].as_u64().unwrap_or(0) > 0 {
        row(
            "events of other problem types (--only)",
            format!("{} (read, not joined)", fmt_value(&r["not_selected"])),
        );
    }
    if r["filtered_out"].as_u64().unwrap_or(0) > 0 {
        row(
            "  filtered out (--only, --since, ...)",
            fmt_value(&r["filtered_out"]),
        );
        row("  kept", fmt_value(&r["kept"]));
    }
    row("  learnable", fmt_value(&r["learnable"]));
    row(
        "  not learnable (skip-learn)",
        fmt_value(&r["not_learnable"]),
    );
    row("outcomes", fmt_value(&r["outcomes"]));
    row("  of which activations", fmt_value(&r["activations"]));
    for end in ["first", "last"] {
        let v = &r[end];
        row(
            &format!("{end} decision"),
            if v.is_null() {
                "-".into()
            } else {
                format!("{} at {}", fmt_value(&v["event_id"]), fmt_value(&v["time"]))
            },
        );
    }
    row("cost sum (cost = -reward)", fmt_value(&r["cost_sum"]));
    row("original cost sum", fmt_value(&r["original_cost_sum"]));
    if let Some(kinds) = r["by_problem_type"].as_object() {
        for (k, v) in kinds {
            row(
                &format!("{k}: decisions"),
                format!(
                    "{} ({} learnable), reward sum {}, mean {}",
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
    let s = &r["salvaged"];
    if s["messages"].as_u64().is_some_and(|n| n > 0) {
        row(
            "salvaged (damaged batches)",
            format!(
                "{} messages: {} events kept, {} withheld, {} lost",
                s["messages"], s["events_kept"], s["events_withheld"], s["events_lost"]
            ),
        );
    }
    let c = &r["counterfactual"];
    let _ = writeln!(t, "\ncounterfactual estimates");
    let indent = " ".repeat(KEY + 1);
    let mut row = |k: &str, v: String| {
        let _ = writeln!(t, "{k:<KEY$} {}", wrap(&v, 100 - KEY - 1, &indent));
    };
    row("  baseline policy", fmt_value(&c["baseline_policy"]));
    row("  method", fmt_value(&c["method"]));
    let estimate = |row: &mut dyn FnMut(&str, String), label: &str, e: &Value| {
        row(
            &format!("{label}: decisions"),
            match e["warning"].as_str() {
                Some(w) => format!("{} ({w})", e["decisions"]),
                None => e["decisions"].to_string(),
            },
        );
        for (key, what) in [
            ("logged_policy_reward", "logged policy"),
            ("baseline_ips", "baseline, IPS"),
            ("baseline_snips", "baseline, SNIPS"),
        ] {
            let x = &e[key];
            row(
                &format!("{label}: {what}"),
                if x.is_null() && key == "baseline_snips" {
                    "- (no decision took the baseline's action)".into()
                } else if x.is_null() {
                    "- (no decision to estimate from)".into()
                } else {
                    format!(
                        "{} (95% CI {} .. {})",
                        fmt_value(&x["value"]),
                        fmt_value(&x["ci95"][0]),
                        fmt_value(&x["ci95"][1])
                    )
                },
            );
        }
    };
    let zero_pass = c["left_out_pass_probability_0"].as_u64().unwrap_or(0);
    if zero_pass > 0 {
        row(
            "  left out",
            format!(
                "{zero_pass} learnable decision{} with pass_probability 0 (a weight of \
                 1/pass_probability would be infinite)",
                if zero_pass == 1 { "" } else { "s" }
            ),
        );
    }
    let by = c["by_problem_type"].as_object();
    if by.is_none_or(|b| b.is_empty()) {
        row(
            "  -",
            match zero_pass {
                0 => "no learnable CB, CCB, Slates or multistep decision".into(),
                _ => "no learnable CB, CCB, Slates or multistep decision with a \
                      pass_probability above 0"
                    .into(),
            },
        );
    }
    for (kind, e) in by.into_iter().flatten() {
        match kind.as_str() {
            "ccb" => {
                row("  ccb covers", fmt_value(&e["covers"]));
                for s in e["slots"].as_array().into_iter().flatten() {
                    estimate(&mut row, &format!("  ccb slot {}", s["slot"]), s);
                }
            }
            "slates" => {
                row("  slates covers", fmt_value(&e["covers"]));
                estimate(&mut row, "  slates", e);
                for s in e["slots"].as_array().into_iter().flatten() {
                    estimate(&mut row, &format!("  slates slot {}", s["slot"]), s);
                }
            }
            other => estimate(&mut row, &format!("  {other}"), e),
        }
    }
    let _ = writeln!(
        t,
        "\nthe reference's metrics (its --extra_metrics; costs are -reward, \"first slot\" is slot 0 \
         of CCB and Slates decisions)"
    );
    if let Some(m) = r["reference_metrics"].as_object() {
        for (k, v) in m {
            let _ = writeln!(
                t,
                "{:<KEY$} {}",
                format!("  {}", k.replace('_', " ")),
                fmt_value(v)
            );
        }
    }
    t
}

/// What stats keep of the kept events: their metrics and the estimators.
#[derive(Default)]
pub struct Tally {
    /// Metrics of the kept events.
    pub kept: Metrics,
    /// Counterfactual estimators over them.
    pub estimators: Estimators,
}

/// Fills [`Tally`] batches.
pub struct TallyMaker;

impl fb_join::Maker for TallyMaker {
    type Batch = Tally;

    fn batch(&mut self) -> Tally {
        Tally::default()
    }

    fn add(&mut self, batch: &mut Tally, ev: &JoinedEvent<'_>) {
        batch.kept.record(ev);
        batch.estimators.add(ev);
    }

    fn full(&self, _: &Tally) -> bool {
        false
    }

    fn clear(&mut self, batch: &mut Tally) {
        *batch = Tally::default();
    }
}

/// The stats sink: the sum of every batch.
#[derive(Default)]
pub struct TallySink(pub Tally);

impl fb_join::Sink for TallySink {
    type Batch = Tally;
    type Maker = TallyMaker;

    fn maker(&self) -> TallyMaker {
        TallyMaker
    }

    fn take(&mut self, batch: &mut Tally) -> Result<(), fb_join::Error> {
        self.0.kept.merge(&batch.kept);
        self.0.estimators.merge(&batch.estimators);
        Ok(())
    }
}

/// Prints the statistics; exit 1 when an input was damaged.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    args.filter.check()?;
    let inputs = crate::input::resolve_noting(&args.inputs, global.quiet)?;
    let mut opts = args.join.options();
    opts.only = args.filter.only.clone();
    let keep = |ev: &JoinedEvent<'_>| args.filter.keep(ev);
    // One thread: the sums add up in log order, as always.
    let mut pipeline = fb_join::Pipeline::new(opts, keep, TallySink::default(), 1);
    let fail = |e: fb_join::Error| Error::Msg(e.to_string());
    let run = feed_all(
        &inputs,
        &mut pipeline,
        args.recover,
        global.quiet,
        &fail,
        args.filter.window(),
    )?;
    let filtered = pipeline.filtered();
    let (joiner, TallySink(tally)) = pipeline.finish();
    if run.logs == 0 {
        // Nothing was a log: a table of zeros would read as an empty log.
        if !global.quiet {
            eprintln!("fb: no input is a joined log: no statistics to show");
        }
        return Ok(ExitCode::from(1));
    }
    let report = report_json(
        inputs.len(),
        &run,
        &joiner,
        &tally.kept,
        filtered,
        &tally.estimators,
    );
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
