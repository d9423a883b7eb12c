//! `fb evaluate`: how other policies would have done on the logged
//! decisions (off-policy evaluation), in a table, JSON or CSV.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use fb_run::evaluate::report::{report_json, rows, Row};
use fb_run::evaluate::{By, Cats, Spec};
use fb_run::output::Output;
use fb_run::Error;
use serde_json::Value;

use crate::joinargs::{named, FilterArgs, JoinArgs, ReadArgs};
use crate::Global;

/// How to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for people.
    Table,
    /// One JSON document.
    Json,
    /// One row per window, problem type, policy and estimator.
    Csv,
}

/// Arguments of `fb evaluate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Logs to read (files, directories, `-` for stdin), as one stream.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// A target policy: `baseline` (action 1 for CB, the slot's `_ba` for
    /// CCB and Slates), `uniform`, `constant:K` (CB action K, from 1, where
    /// offered, else action 1) or `predictions:FILE` (VW's `-p` output for
    /// the DSJSON `fb convert` writes with the same flags). For CA (with
    /// --cats): `baseline` (the first bin's centre), `uniform`,
    /// `constant:VALUE` or `predictions:FILE` of VW `--cats`. Repeat for
    /// several; the logged policy is always shown first.
    #[arg(long, value_name = "P", value_parser = clap::builder::ValueParser::new(parse_spec))]
    pub policy: Vec<Spec>,

    /// Estimate CA decisions with vw-estimators' CATS transformer, with
    /// the parameters the loop's model was trained with (VW's `--cats`,
    /// `--bandwidth`, `--min_value`, `--max_value`); the log does not hold
    /// them. Without this, CA decisions are counted only.
    #[arg(long, value_name = "NUM_ACTIONS,BANDWIDTH,MIN,MAX", value_parser = clap::builder::ValueParser::new(parse_cats))]
    pub cats: Option<Cats>,

    /// Also the figures per time window (UTC, by event time).
    #[arg(long, value_name = "WINDOW", value_parser = named::<By>(By::NAMES))]
    pub by: Option<By>,

    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,

    /// Print JSON (the same as `--format json`).
    #[arg(long)]
    pub json: bool,

    /// How to join.
    #[command(flatten)]
    pub join: JoinArgs,

    /// How to read the logs.
    #[command(flatten)]
    pub read: ReadArgs,

    /// Which events to keep.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Keep going past damage, as `fb convert --recover` does.
    #[arg(long)]
    pub recover: bool,

    /// Worker threads joining in parallel (1 to 256; one with
    /// `--recover`). The evaluation is the same bytes whatever the
    /// number: one thread takes the decisions in log order, reads the
    /// prediction files along and adds the sums. Default: the available
    /// cores.
    #[arg(long, value_name = "N", value_parser = crate::convert::parse_threads)]
    pub threads: Option<usize>,
}

pub(crate) fn parse_spec(s: &str) -> Result<Spec, String> {
    s.parse()
}

fn parse_cats(s: &str) -> Result<Cats, String> {
    s.parse()
}

fn num(v: &Value) -> String {
    v.as_f64().map_or_else(|| "-".into(), |x| format!("{x:.6}"))
}

fn interval(v: &Value) -> String {
    match (
        v.get(0).and_then(Value::as_f64),
        v.get(1).and_then(Value::as_f64),
    ) {
        (Some(a), Some(b)) => format!("[{a:.6}, {b:.6}]"),
        _ => "-".into(),
    }
}

/// Width of the label column: the longest label fits.
const LABEL: usize = 36;

/// The table of one set of problem types.
fn kinds_table(t: &mut String, by: &Value, indent: &str) {
    let Some(by) = by.as_object() else {
        return;
    };
    if by.is_empty() {
        let _ = writeln!(
            t,
            "{indent}no learnable CB, CCB, Slates, multistep or (with --cats) CA decision"
        );
    }
    for (kind, k) in by {
        let _ = writeln!(
            t,
            "{indent}{kind}: {} decisions, smallest logged probability {}",
            k["decisions"],
            num(&k["smallest_logged_probability"])
        );
        for w in k["warnings"].as_array().into_iter().flatten() {
            let _ = writeln!(t, "{indent}  warning: {}", w.as_str().unwrap_or(""));
        }
        for p in k["policies"].as_array().into_iter().flatten() {
            let name = p["policy"].as_str().unwrap_or("");
            let _ = writeln!(t, "{indent}  policy {name}");
            let row = |t: &mut String, what: &str, v: String| {
                let _ = writeln!(t, "{indent}    {what:<LABEL$} {v}");
            };
            if kind == "slates" {
                row(
                    t,
                    "pseudo-inverse (Gaussian CI)",
                    format!(
                        "{} {}",
                        num(&p["pseudo_inverse"]),
                        interval(&p["pseudo_inverse_gaussian_ci95"])
                    ),
                );
            } else {
                let b = if kind == "ccb" { &p["first_slot"] } else { p };
                let label = |s: &str| {
                    if kind == "ccb" {
                        format!("first slot {s}")
                    } else {
                        s.to_string()
                    }
                };
                row(
                    t,
                    &label("IPS (Gaussian CI)"),
                    format!("{} {}", num(&b["ips"]), interval(&b["gaussian_ci95"])),
                );
                row(
                    t,
                    &label("SNIPS (delta-method CI)"),
                    format!("{} {}", num(&b["snips"]), interval(&b["snips_ci95"])),
                );
                row(
                    t,
                    &label("Cressie-Read"),
                    format!(
                        "{} {}",
                        num(&b["cressie_read"]),
                        interval(&b["cressie_read_ci95"])
                    ),
                );
                row(
                    t,
                    &label("Clopper-Pearson CI"),
                    interval(&b["clopper_pearson_ci95"]),
                );
                row(
                    t,
                    &label("effective sample size"),
                    num(&b["effective_sample_size"]),
                );
                for s in p["slots"].as_array().into_iter().flatten() {
                    row(
                        t,
                        &format!("slot {} Cressie-Read", s["slot"]),
                        format!(
                            "{} {}",
                            num(&s["cressie_read"]),
                            interval(&s["cressie_read_ci95"])
                        ),
                    );
                }
                let m = &p["multislot"];
                if m.is_object() {
                    row(
                        t,
                        "multislot r overall",
                        format!(
                            "{} {}",
                            num(&m["r_overall"]),
                            interval(&m["r_overall_ci95"])
                        ),
                    );
                }
                for s in m["slots"].as_array().into_iter().flatten() {
                    let id = s["slot_id"].as_str().unwrap_or("");
                    for (what, label) in [
                        ("impression", "impression"),
                        ("r_given_impression", "r given impression"),
                        ("r", "r"),
                    ] {
                        row(
                            t,
                            &format!("multislot {id} {label}"),
                            format!(
                                "{} {}",
                                num(&s[what]),
                                interval(&s[format!("{what}_ci95").as_str()])
                            ),
                        );
                    }
                }
            }
            for w in p["warnings"].as_array().into_iter().flatten() {
                let _ = writeln!(t, "{indent}    warning: {}", w.as_str().unwrap_or(""));
            }
        }
    }
}

fn table(r: &Value) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "events read: {}", r["events"]);
    let ne = &r["not_estimated"];
    let _ = writeln!(
        t,
        "not estimated: {} CA decisions, {} not learnable (skip-learn)",
        ne["ca"], ne["not_learnable"]
    );
    if let Some(why) = ne["ca_why"].as_str() {
        let _ = writeln!(t, "  ({why})");
    }
    let _ = writeln!(
        t,
        "95% intervals; [low, high]; - where undefined (docs/evaluate.md)\n"
    );
    kinds_table(&mut t, &r["by_problem_type"], "");
    for w in r["windows"].as_array().into_iter().flatten() {
        let _ = writeln!(t, "\nwindow from {}", w["start"].as_str().unwrap_or(""));
        kinds_table(&mut t, &w["by_problem_type"], "  ");
    }
    t
}

fn csv_field(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v:?}"))
}

fn csv(r: &Value) -> String {
    let mut all: Vec<Row> = Vec::new();
    rows("", &r["by_problem_type"], &mut all);
    for w in r["windows"].as_array().into_iter().flatten() {
        rows(
            w["start"].as_str().unwrap_or(""),
            &w["by_problem_type"],
            &mut all,
        );
    }
    let mut t = String::from("window,problem_type,policy,estimator,decisions,value,low,high\n");
    for row in all {
        // Policy names may hold a file name: quoted as CSV quotes.
        let policy = format!("\"{}\"", row.policy.replace('"', "\"\""));
        let _ = writeln!(
            t,
            "{},{},{},{},{},{},{},{}",
            row.window,
            row.problem_type,
            policy,
            row.estimator,
            row.decisions,
            csv_field(row.value),
            csv_field(row.ci.map(|c| c[0])),
            csv_field(row.ci.map(|c| c[1]))
        );
    }
    t
}

/// Prints the evaluation; exit 1 when an input was damaged.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let filter = args.filter.filter()?;
    let inputs = crate::say::resolve(&args.inputs, global.quiet)?;
    let job = crate::say::job(
        &inputs,
        &args.join,
        &args.read,
        &filter,
        args.recover,
        "the evaluation",
    );
    let threads = args
        .threads
        .unwrap_or_else(fb_run::options::default_threads);
    let mut voice = crate::say::Voice::new(global.quiet);
    let outcome =
        fb_run::evaluate::run(job, &args.policy, args.by, args.cats, threads, &mut voice)?;
    let evaluated = outcome.value;
    if let Some(e) = evaluated.failure {
        return Err(e);
    }
    if let Some(stop) = outcome.stop {
        return Err(stop.into_error());
    }
    let run = outcome.run;
    if run.logs == 0 {
        if !global.quiet {
            eprintln!("fb: no input is a joined log: nothing to evaluate");
        }
        return Ok(ExitCode::from(1));
    }
    evaluated.finished?;
    let evaluation = evaluated.evaluation;
    let report = report_json(&evaluation);
    let format = if args.json { Format::Json } else { args.format };
    let text = match format {
        Format::Json => format!("{report}\n"),
        Format::Table => table(&report),
        Format::Csv => csv(&report),
    };
    let mut out = Output::stdout();
    out.put(text.as_bytes())?;
    out.finish()?;
    Ok(crate::say::exit_code(&run))
}
