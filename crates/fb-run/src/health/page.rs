//! The report page: its sections in order, each a chart with its table
//! or a note saying what is missing. Figures of the stats report are
//! shown from it (`data-stat`), so they are `fb stats --json`'s.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::html::{at, esc, missing, page, show, stat_of, total, Chart, Kind, Series};
use super::timeline::Window;
use super::{config, delays, propensity, Health};
use crate::evaluate::Evaluation;
use crate::stats::report_json;

/// Top actions listed per group.
const TOP_ACTIONS: usize = 10;

/// Groups of actions given a chart (all have a table).
const ACTION_CHARTS: usize = 6;

const BLUE: &str = "#3a6fb0";
const GREEN: &str = "#2e8b57";
const ORANGE: &str = "#d9822b";
const GREY: &str = "#8a96a3";

/// What the run saw, besides the report's aggregates.
pub type Run<'a> = crate::job::Finished<'a>;

/// The stats report of the run: `fb stats --json`'s, from the same code.
pub fn stats(run: &Run<'_>, health: &Health) -> Value {
    report_json(
        run.inputs,
        run.run,
        run.joiner,
        &health.tally.kept,
        run.filtered,
        &health.tally.estimators,
    )
}

/// The whole page, and the stats report it shows; with the target
/// policies' evaluation (with windows per hour and per day), their
/// section too.
pub fn render(run: &Run<'_>, health: Health, policies: Option<Evaluation>) -> (String, Value) {
    let report = stats(run, &health);
    let mut body = String::new();
    let mut charts = Vec::new();
    super::header::header(&mut body, run, &report);
    if run.run.logs > 0 {
        let Health {
            timeline,
            propensities,
            actions,
            delays,
            ..
        } = health;
        let (width, windows) = timeline.shown();
        let windows = every_window(width, windows);
        over_time(&mut body, &mut charts, width, &windows);
        rewards(&mut body, &mut charts, &report, width, &windows);
        if let Some(mut evaluation) = policies {
            let by = super::policies::by_for(width);
            // Both widths are kept (`PageSink::new`): this only picks.
            evaluation.show_by(by);
            super::policies::section(&mut body, &mut charts, &evaluation, by);
        }
        propensity_section(&mut body, &mut charts, &propensities);
        actions_section(&mut body, &mut charts, &actions);
        delays_section(&mut body, &mut charts, &delays);
        config_section(&mut body, run);
    }
    let _ = write!(
        body,
        "<h2>How this page was made</h2><p class=\"note\">By fb {} in one pass over the \
         inputs. Every figure is that of <code>fb stats --json</code> on the same inputs with \
         the same options (the report is below, as JSON); the charts add up the same events \
         per window and bin. Charts drawn by uPlot 1.6.32 (MIT License), inlined: the page \
         needs no network. docs/report.md says what each figure means.</p>\
         <script type=\"application/json\" id=\"fb-stats\">{}</script>",
        env!("CARGO_PKG_VERSION"),
        super::html::script_json(&report)
    );
    let title = match run.run.starts.first() {
        Some((_, name)) if run.run.starts.len() == 1 => format!("Loop health: {name}"),
        Some((_, name)) => format!("Loop health: {name} and {} more", run.run.starts.len() - 1),
        None => "Loop health".into(),
    };
    (page(&title, &body, &charts), report)
}

/// A window's name: its start, to the minute or the day.
fn window_label(start: i64, width: i64) -> String {
    let days = start.div_euclid(86_400);
    let (y, m, d) = fb_schema::calendar::civil_from_days(days);
    let date = format!("{y:04}-{m:02}-{d:02}");
    let secs = start.rem_euclid(86_400);
    match width {
        w if w < 86_400 => format!("{date} {:02}:{:02}", secs / 3600, secs % 3600 / 60),
        86_400 => date,
        w => format!("{date} (+{} days)", w / 86_400),
    }
}

fn width_name(width: i64) -> String {
    match width {
        60 => "minute".into(),
        600 => "10 minutes".into(),
        3600 => "hour".into(),
        86_400 => "day".into(),
        w => format!("{} days", w / 86_400),
    }
}

/// Every window from the first to the last, those without a decision
/// too (`None`), so that charts show gaps where there were none: at most
/// [`super::timeline::SHOWN_WINDOWS`] and one, as the width is chosen.
fn every_window(width: i64, mut windows: BTreeMap<i64, Window>) -> Slots {
    let (Some(&first), Some(&last)) = (windows.keys().next(), windows.keys().next_back()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut start = first;
    while start <= last {
        out.push((start, windows.remove(&start)));
        // A window start past the last kept one would overflow only for
        // times near the end of i64: stop there.
        match start.checked_add(width) {
            Some(next) => start = next,
            None => break,
        }
    }
    out
}

/// Windows in order, each with its start and what it holds, if anything.
type Slots = Vec<(i64, Option<Window>)>;

fn over_time(out: &mut String, charts: &mut Vec<Chart>, width: i64, windows: &Slots) {
    out.push_str("<h2>Decisions and outcomes over time</h2>");
    if windows.is_empty() {
        missing(out, "No decision was kept: nothing to show over time.");
        return;
    }
    let _ = write!(
        out,
        "<p>Per {} (UTC, by each decision's time).",
        width_name(width)
    );
    let held = || windows.iter().filter_map(|(_, w)| w.as_ref());
    let decisions: u64 = held().map(|w| w.decisions).sum();
    let outcomes: u64 = held().map(|w| w.outcomes).sum();
    let _ = write!(
        out,
        " In all: {} decisions kept, {} outcomes.</p>",
        total("kept", decisions),
        total("outcomes", outcomes)
    );
    if windows.len() < 2 {
        missing(
            out,
            "Every decision falls in one window: a chart needs two; the table has the one.",
        );
    }
    let x: Vec<f64> = windows.iter().map(|&(s, _)| s as f64).collect();
    let series = |label: &str, color, f: &dyn Fn(&Window) -> f64| Series {
        label: label.into(),
        values: windows
            .iter()
            .map(|(_, w)| Some(w.as_ref().map_or(0.0, f)))
            .collect(),
        color,
        dashed: false,
    };
    let chart = Chart {
        id: "decisions-over-time".into(),
        kind: Kind::Time,
        title: format!("Decisions and outcomes per {}", width_name(width)),
        labels: windows
            .iter()
            .map(|&(s, _)| window_label(s, width))
            .collect(),
        x,
        series: vec![
            series("decisions", BLUE, &|w| w.decisions as f64),
            series("decisions with an outcome", GREEN, &|w| {
                w.with_outcomes as f64
            }),
            series("outcomes", ORANGE, &|w| w.outcomes as f64),
        ],
        mark: None,
    };
    chart.html(out);
    if windows.len() >= 2 {
        charts.push(chart);
    }
}

/// The estimate keys of a window's (or the whole log's) counterfactual
/// report to chart: CB, multistep, Slates, and CCB's slot 0.
fn estimate_of<'a>(c: &'a Value, key: &str) -> &'a Value {
    let kind = at(at(c, "by_problem_type"), key);
    match key {
        "ccb" => at(kind, "slots.0"),
        _ => kind,
    }
}

fn rewards(out: &mut String, charts: &mut Vec<Chart>, r: &Value, width: i64, windows: &Slots) {
    out.push_str("<h2>Reward over time</h2>");
    if windows.is_empty() {
        missing(out, "No decision was kept: no reward to show.");
        return;
    }
    let labels: Vec<String> = windows
        .iter()
        .map(|&(s, _)| window_label(s, width))
        .collect();
    let x: Vec<f64> = windows.iter().map(|&(s, _)| s as f64).collect();
    let mean = Chart {
        id: "reward-over-time".into(),
        kind: Kind::Time,
        title: format!(
            "Mean reward per decision, per {} (the reward used for learning; CCB: summed over slots)",
            width_name(width)
        ),
        labels: labels.clone(),
        x: x.clone(),
        series: vec![Series {
            label: "mean reward".into(),
            values: windows
                .iter()
                .map(|(_, w)| {
                    w.as_ref()
                        .filter(|w| w.decisions > 0)
                        .map(|w| w.reward_sum / w.decisions as f64)
                })
                .collect(),
            color: BLUE,
            dashed: false,
        }],
        mark: None,
    };
    mean.html(out);
    if windows.len() >= 2 {
        charts.push(mean);
    }
    let whole = at(r, "counterfactual");
    let _ = write!(
        out,
        "<h3>The logged policy and the baseline</h3><p class=\"note\">Baseline: {}. {}</p>",
        esc(at(whole, "baseline_policy").as_str().unwrap_or("")),
        esc(at(whole, "method").as_str().unwrap_or(""))
    );
    let kinds: Vec<String> = at(whole, "by_problem_type")
        .as_object()
        .map_or(Vec::new(), |m| m.keys().cloned().collect());
    if kinds.is_empty() {
        missing(
            out,
            "No learnable CB, CCB, Slates or multistep decision with a pass_probability above \
             0: no estimate to show (continuous actions have none).",
        );
        return;
    }
    estimates_table(out, r, &kinds);
    let per_window: Vec<Value> = windows
        .iter()
        .map(|(_, w)| w.as_ref().map_or(Value::Null, |w| w.estimators.json()))
        .collect();
    for key in &kinds {
        // Each window's four figures of this kind, each subtree looked up
        // once.
        let figures: Vec<[Option<f64>; 4]> = per_window
            .iter()
            .map(|c| {
                let e = estimate_of(c, key);
                let ips = at(e, "baseline_ips");
                let ci = at(ips, "ci95");
                [
                    at(at(e, "logged_policy_reward"), "value").as_f64(),
                    at(ips, "value").as_f64(),
                    at(ci, "0").as_f64(),
                    at(ci, "1").as_f64(),
                ]
            })
            .collect();
        let series = |label: &str, figure: usize, color, dashed| Series {
            label: label.into(),
            values: figures
                .iter()
                .map(|f| f.get(figure).copied().flatten())
                .collect(),
            color,
            dashed,
        };
        let name = match key.as_str() {
            "ccb" => "ccb slot 0".to_string(),
            k => k.to_string(),
        };
        let chart = Chart {
            id: format!("estimates-{key}"),
            kind: Kind::Time,
            title: format!(
                "{name}: the logged policy's reward and the baseline's (IPS, 95% interval), per {}",
                width_name(width)
            ),
            labels: labels.clone(),
            x: x.clone(),
            series: vec![
                series("logged policy", 0, BLUE, false),
                series("baseline (IPS)", 1, ORANGE, false),
                series("IPS low", 2, GREY, true),
                series("IPS high", 3, GREY, true),
            ],
            mark: None,
        };
        chart.html(out);
        if windows.len() >= 2 {
            charts.push(chart);
        }
    }
}

/// The whole log's estimates, from the stats report.
fn estimates_table(out: &mut String, r: &Value, kinds: &[String]) {
    out.push_str(
        "<table><thead><tr><th>over the whole log</th><th>decisions</th><th>logged policy</th>\
         <th>baseline, IPS</th><th>baseline, SNIPS</th></tr></thead><tbody>",
    );
    let mut row = |label: String, path: String| {
        // Each figure's subtree looked up once, not from the top again.
        let estimates = at(r, &path);
        let est = |what: &str| {
            let v = at(estimates, what);
            let ci = at(v, "ci95");
            match (v.is_null(), ci.is_null()) {
                (true, _) => "-".to_string(),
                // One decision gives no interval: one figure says so.
                (false, true) => format!(
                    "{} ({})",
                    stat_of(&format!("{path}.{what}.value"), at(v, "value")),
                    stat_of(&format!("{path}.{what}.ci95"), ci)
                ),
                (false, false) => format!(
                    "{} ({} .. {})",
                    stat_of(&format!("{path}.{what}.value"), at(v, "value")),
                    stat_of(&format!("{path}.{what}.ci95.0"), at(ci, "0")),
                    stat_of(&format!("{path}.{what}.ci95.1"), at(ci, "1"))
                ),
            }
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&label),
            stat_of(&format!("{path}.decisions"), at(estimates, "decisions")),
            est("logged_policy_reward"),
            est("baseline_ips"),
            est("baseline_snips")
        );
    };
    for key in kinds {
        let base = format!("counterfactual.by_problem_type.{key}");
        if key != "ccb" {
            row(key.clone(), base.clone());
        }
        let slots = at(r, &format!("{base}.slots"))
            .as_array()
            .map_or(0, Vec::len);
        for i in 0..slots {
            row(format!("{key} slot {i}"), format!("{base}.slots.{i}"));
        }
    }
    out.push_str("</tbody></table><p class=\"note\">Each estimate with its 95% interval.</p>");
}

fn propensity_section(out: &mut String, charts: &mut Vec<Chart>, p: &propensity::Propensities) {
    out.push_str("<h2>Propensity health</h2>");
    if p.count == 0 {
        let why = match (p.densities, p.invalid) {
            (0, 0) => "No decision was kept: no probability to show.".to_string(),
            (d, 0) => format!(
                "Only continuous-action decisions ({d}): they log a density, not a \
                 probability; there is no propensity histogram."
            ),
            (_, i) => format!(
                "No chosen action has a probability in (0, 1]: {i} are 0, negative, above 1 \
                 or not a number."
            ),
        };
        missing(out, &why);
        return;
    }
    let _ = write!(
        out,
        "<p>Logged probabilities of the chosen actions (one per CB or multistep decision, one \
         per slot of CCB and Slates decisions): <span data-propensities=\"{}\">{}</span>. \
         Effective sample size <span data-ess>{}</span> (Kish, of the weights \
         1/(p &times; pass_probability)); {} invalid (0, negative, above 1){}.</p>",
        p.count,
        p.count,
        p.effective_sample_size().map_or("-".into(), show),
        p.invalid,
        match p.densities {
            0 => String::new(),
            d => format!("; {d} continuous-action decisions log densities and are left out"),
        }
    );
    let labels: Vec<String> = std::iter::once(0.0)
        .chain(propensity::EDGES)
        .zip(propensity::EDGES)
        .map(|(a, b)| format!("{} .. {}", show(a), show(b)))
        .collect();
    let chart = Chart {
        id: "propensities".into(),
        kind: Kind::Bars,
        title: "Chosen actions' probabilities (each bin: above its low end, up to its high end)"
            .into(),
        x: (0..labels.len()).map(|i| i as f64).collect(),
        labels,
        series: vec![Series {
            label: "chosen actions".into(),
            values: p.bins.iter().map(|&n| Some(n as f64)).collect(),
            color: BLUE,
            dashed: false,
        }],
        mark: None,
    };
    chart.html(out);
    charts.push(chart);
    out.push_str(
        "<table><thead><tr><th>smallest probabilities</th><th>event id</th><th>slot</th>\
         <th>time</th></tr></thead><tbody>",
    );
    for s in &p.smallest {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            show(f64::from(s.probability)),
            esc(&s.event_id),
            s.slot.map_or("-".into(), |s| s.to_string()),
            esc(&config::time_text(&s.time))
        );
    }
    out.push_str("</tbody></table>");
}

fn actions_section(out: &mut String, charts: &mut Vec<Chart>, a: &super::actions::Actions) {
    out.push_str("<h2>Actions chosen</h2>");
    let groups = a.groups();
    if groups.is_empty() {
        missing(
            out,
            "No CB, CCB, Slates or multistep decision was kept: no action to count \
             (continuous actions are numbers, not counted).",
        );
        return;
    }
    for (n, (g, c)) in groups.iter().enumerate() {
        let top = c.top(TOP_ACTIONS);
        let whole = match g.slot {
            None => total(&format!("by_problem_type.{}.events", g.kind), c.total),
            Some(_) => c.total.to_string(),
        };
        let _ = write!(
            out,
            "<h3>{}</h3><p>{} decisions; {} distinct actions{}{}.</p>",
            esc(&g.to_string()),
            whole,
            c.distinct(),
            match c.other {
                0 => String::new(),
                o => format!(", {o} decisions with actions past the first 1024 counted"),
            },
            match c.none {
                0 => String::new(),
                o => format!(", {o} without an action"),
            }
        );
        let labels: Vec<String> = top.iter().map(|(a, _)| format!("action {a}")).collect();
        let chart = Chart {
            id: format!("actions-{n}"),
            kind: Kind::Bars,
            title: format!("{g}: the {} most chosen actions", top.len()),
            x: (0..top.len()).map(|i| i as f64).collect(),
            labels,
            series: vec![Series {
                label: "decisions".into(),
                values: top.iter().map(|&(_, n)| Some(n as f64)).collect(),
                color: GREEN,
                dashed: false,
            }],
            mark: None,
        };
        chart.html(out);
        if n < ACTION_CHARTS {
            charts.push(chart);
        }
    }
}

fn delays_section(out: &mut String, charts: &mut Vec<Chart>, d: &delays::Delays) {
    out.push_str("<h2>Outcome delays</h2>");
    if d.count == 0 {
        missing(
            out,
            "No outcome was joined to a kept decision: no delay to show.",
        );
        return;
    }
    let _ = write!(
        out,
        "<p>Time from each decision to each of its outcomes that count ({} outcomes), in the \
         times the joiner uses (enqueued, or the client's where the configuration says so). \
         The longest: {} s.",
        d.count,
        d.longest().map_or("-".into(), show)
    );
    match d.window() {
        Some(w) => {
            let _ = write!(
                out,
                " Join window: {} s; <span data-beyond-window>{}</span> outcomes came later.</p>",
                show(w as f64 / 1e6),
                d.beyond_window
            );
        }
        None => out.push_str(
            " The log does not record the loop's join window; give it with \
             <code>--join-window</code> to mark it.</p>",
        ),
    }
    let labels: Vec<String> = delays::LABELS.iter().map(|s| s.to_string()).collect();
    let chart = Chart {
        id: "delays".into(),
        kind: Kind::Bars,
        title: "Outcome delays".into(),
        x: (0..labels.len()).map(|i| i as f64).collect(),
        labels,
        series: vec![Series {
            label: "outcomes".into(),
            values: d.bins.iter().map(|&n| Some(n as f64)).collect(),
            color: ORANGE,
            dashed: false,
        }],
        mark: d
            .window_bin()
            .map(|b| (b, "the bin the join window ends in".to_string())),
    };
    chart.html(out);
    charts.push(chart);
}

fn config_section(out: &mut String, run: &Run<'_>) {
    out.push_str("<h2>Configuration</h2>");
    let history = run.joiner.config_history();
    let rows = config::rows(run.run, history);
    if rows.is_empty() {
        missing(
            out,
            "No checkpoint was read: the configuration is the default, or the one the options \
             set.",
        );
        return;
    }
    let _ = write!(
        out,
        "<p>{} read; the first, and each that changed the configuration:</p>\
         <table><thead><tr><th>input</th><th>byte offset</th><th>message</th>\
         <th>after decisions</th><th>last decision before</th><th>problem type</th>\
         <th>reward function</th><th>default reward</th><th>learning mode</th>\
         <th>client time</th></tr></thead><tbody>",
        crate::plural(history.checkpoints, "checkpoint")
    );
    for c in &rows {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.input),
            c.offset,
            c.message,
            c.decisions_before,
            esc(c.after.as_deref().unwrap_or("-")),
            esc(&c.problem_type),
            esc(&c.reward_function),
            show(f64::from(c.default_reward)),
            esc(&c.learning_mode),
            if c.use_client_time { "yes" } else { "no" }
        );
    }
    out.push_str("</tbody></table>");
    if history.left_out > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{} later changes are not listed.</p>",
            history.left_out
        );
    }
}
