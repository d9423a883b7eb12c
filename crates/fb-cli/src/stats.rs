//! `fb stats`: what is in a set of logs, in one table (or JSON).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::Value;

use crate::joinargs::{FilterArgs, JoinArgs};
use crate::Global;
use fb_run::output::Output;
use fb_run::Error;

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

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,

    /// Which events to keep.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Keep going past damage, as `fb convert --recover` does: resume at
    /// the next plausible message, and count the good events of damaged
    /// batches (`salvaged` in the output).
    #[arg(long)]
    pub recover: bool,

    /// Worker threads joining in parallel (1 to 256; one with
    /// `--recover`). The report is the same bytes whatever the number:
    /// its sums are added in log order. Default: the available cores.
    #[arg(long, value_name = "N", value_parser = crate::convert::parse_threads)]
    pub threads: Option<usize>,
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
                        fmt_value(x["ci95"].get(0).unwrap_or(&Value::Null)),
                        fmt_value(x["ci95"].get(1).unwrap_or(&Value::Null))
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

/// Prints the statistics; exit 1 when an input was damaged.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let filter = args.filter.filter()?;
    let inputs = crate::say::resolve(&args.inputs, global.quiet)?;
    let job = crate::say::job(
        &inputs,
        &args.join,
        &args.read,
        &filter,
        args.recover,
        "the statistics",
    );
    let threads = args
        .threads
        .unwrap_or_else(fb_run::options::default_threads);
    let outcome = fb_run::stats::run(job, threads, &mut crate::say::Voice::new(global.quiet));
    if let Some(stop) = outcome.stop {
        return Err(stop.into_error());
    }
    let (report, run) = (outcome.value, outcome.run);
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
    Ok(crate::say::exit_code(&run))
}
