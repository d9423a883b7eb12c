//! The page's header: inputs, time range, counts, messages, and the
//! problems found (damage, skipped events by reason, where they were).

use std::fmt::Write as _;

use serde_json::Value;

use super::html::{at, esc, missing, stat};
use super::page::Run;

/// Problems listed in full at most (all are counted).
const MAX_PROBLEMS: usize = 100;

fn card(out: &mut String, label: &str, value: &str, note: &str) {
    let _ = write!(
        out,
        "<div class=\"card\"><small>{}</small><b>{value}</b><small>{}</small></div>",
        esc(label),
        esc(note)
    );
}

/// The header, and the problems found below it.
pub fn header(out: &mut String, run: &Run<'_>, r: &Value) {
    let _ = write!(out, "<h1>Loop health</h1><p>Inputs: ");
    let names: Vec<String> = run
        .run
        .starts
        .iter()
        .map(|(_, n)| format!("<code>{}</code>", esc(n)))
        .collect();
    match names.is_empty() {
        true => out.push_str("none read"),
        false => out.push_str(&names.join(", ")),
    }
    let _ = write!(
        out,
        " ({} given, {} read as logs, {} bytes).</p>",
        stat(r, "inputs"),
        stat(r, "logs"),
        stat(r, "bytes")
    );
    if run.run.logs == 0 {
        out.push_str(
            "<p class=\"problem\" data-missing>No input is a joined log (each is empty or \
             not a log): there is nothing to show. Check the paths given.</p>",
        );
        problems(out, run, r);
        return;
    }
    match (at(r, "first.time"), at(r, "last.time")) {
        (Value::String(_), Value::String(_)) => {
            let _ = write!(
                out,
                "<p>Decisions from {} to {} (UTC, event time).</p>",
                stat(r, "first.time"),
                stat(r, "last.time")
            );
        }
        _ => missing(
            out,
            "No decision was kept: the log has no time range to show.",
        ),
    }
    out.push_str("<div class=\"grid\">");
    let messages: u64 = at(r, "messages")
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    card(out, "messages", &messages.to_string(), "of every type");
    card(
        out,
        "decisions joined",
        &stat(r, "joined"),
        "one DSJSON line each",
    );
    card(out, "kept", &stat(r, "kept"), "after the filters");
    card(out, "learnable", &stat(r, "learnable"), "not skip-learn");
    card(
        out,
        "outcomes",
        &stat(r, "outcomes"),
        "that count, activations included",
    );
    let skipped: u64 = at(r, "skipped_by_reason")
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    card(out, "skipped", &skipped.to_string(), "events, all reasons");
    out.push_str("</div>");
    let _ = write!(
        out,
        "<table><tr><th>events read</th><td>{}</td></tr><tr><th>filtered out</th><td>{}</td></tr>\
         <tr><th>not learnable (skip-learn)</th><td>{}</td></tr><tr><th>of which activations</th>\
         <td>{}</td></tr><tr><th>cost sum (cost = -reward)</th><td>{}</td></tr></table>",
        stat(r, "events_read"),
        stat(r, "filtered_out"),
        stat(r, "not_learnable"),
        stat(r, "activations"),
        stat(r, "cost_sum")
    );
    if let Some(kinds) = at(r, "by_problem_type").as_object() {
        out.push_str(
            "<table><thead><tr><th>problem type</th><th>decisions</th><th>learnable</th>\
             <th>reward sum</th><th>mean reward</th></tr></thead><tbody>",
        );
        for k in kinds.keys() {
            let p = format!("by_problem_type.{k}");
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(k),
                stat(r, &format!("{p}.events")),
                stat(r, &format!("{p}.learnable")),
                stat(r, &format!("{p}.reward_sum")),
                stat(r, &format!("{p}.reward_mean"))
            );
        }
        out.push_str("</tbody></table>");
    }
    if let Some(msgs) = at(r, "messages").as_object() {
        out.push_str("<details><summary>Messages by type</summary><table>");
        for k in msgs.keys() {
            let _ = write!(
                out,
                "<tr><th>{}</th><td>{}</td></tr>",
                esc(k),
                stat(r, &format!("messages.{k}"))
            );
        }
        out.push_str("</table></details>");
    }
    problems(out, run, r);
}

fn problems(out: &mut String, run: &Run<'_>, r: &Value) {
    out.push_str("<h2>Problems found</h2>");
    let skipped = at(r, "skipped_by_reason").as_object();
    let diags = run.joiner.diagnostics();
    if run.run.damage.is_empty() && skipped.is_none_or(|s| s.is_empty()) && diags.total() == 0 {
        out.push_str("<p class=\"ok\">No damage, no event skipped, no problem found.</p>");
        return;
    }
    if !run.run.damage.is_empty() {
        out.push_str(
            "<p class=\"problem\">Damaged inputs (what was read before the damage is \
             counted):</p><table><thead><tr><th>input</th><th>byte offset</th><th>message</th>\
             <th>what</th></tr></thead><tbody>",
        );
        for d in &run.run.damage {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&d.input),
                d.offset.map_or("-".into(), |o| o.to_string()),
                d.message_index.map_or("-".into(), |o| o.to_string()),
                esc(&d.why)
            );
        }
        out.push_str("</tbody></table>");
    }
    if let Some(s) = skipped.filter(|s| !s.is_empty()) {
        out.push_str(
            "<table><thead><tr><th>skipped or found, by reason</th><th>count</th></tr>\
             </thead><tbody>",
        );
        for k in s.keys() {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(k),
                stat(r, &format!("skipped_by_reason.{k}"))
            );
        }
        out.push_str("</tbody></table>");
    }
    let kept = diags.kept();
    if !kept.is_empty() {
        let _ = write!(
            out,
            "<details><summary>Where: the first {} problems</summary><table><thead><tr>\
             <th>input</th><th>byte offset</th><th>message</th><th>event id</th><th>reason</th>\
             <th>what</th></tr></thead><tbody>",
            kept.len().min(MAX_PROBLEMS)
        );
        for (i, d) in kept.iter().enumerate().take(MAX_PROBLEMS) {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(run.run.file_of(i).unwrap_or("-")),
                d.offset,
                d.message,
                esc(d.event_id.as_deref().unwrap_or("-")),
                esc(d.kind.name()),
                esc(&d.detail)
            );
        }
        out.push_str("</tbody></table></details>");
    }
}
