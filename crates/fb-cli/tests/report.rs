//! `fb report`: the page's figures are `fb stats --json`'s, the page is
//! self-contained, and logs with nothing to chart get a page that says
//! what is missing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::PathBuf;

use common::{data, fb, p, scratch_dir};
use serde_json::Value;

/// One input set and what its page must show.
struct Case {
    name: &'static str,
    inputs: Vec<PathBuf>,
    /// Options for both `fb report` and `fb stats`.
    flags: &'static [&'static str],
    /// Exit code of both commands.
    code: i32,
    /// Texts the page must hold.
    says: &'static [&'static str],
    /// Charts the page draws at least.
    charts: usize,
}

fn cases(dir: &std::path::Path) -> Vec<Case> {
    let empty = dir.join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    let v = |name: &str| data(&format!("valid_joined_logs/{name}"));
    // A log cut short inside its fifth message.
    let cut = dir.join("cut.fb");
    let whole = std::fs::read(v("average_reward_100_interactions.fb")).unwrap();
    std::fs::write(&cut, &whole[..whole.len() - 300]).unwrap();
    vec![
        Case {
            name: "corpus folder",
            inputs: vec![data("valid_joined_logs")],
            flags: &[],
            code: 0,
            says: &["Decisions and outcomes over time", "Propensity health"],
            charts: 4,
        },
        Case {
            name: "single event",
            inputs: vec![v("cb_simple.log")],
            flags: &[],
            code: 0,
            says: &["Every decision falls in one window", "only 1 decision"],
            charts: 2,
        },
        Case {
            name: "ccb",
            inputs: vec![v("ccb_sum_reward_100_interactions.fb")],
            flags: &[],
            code: 0,
            says: &["ccb slot 0", "ccb slot 1"],
            charts: 2,
        },
        Case {
            name: "slates",
            inputs: vec![v("slates_average_reward_100_interactions.fb")],
            flags: &[],
            code: 0,
            says: &["slates slot 0"],
            charts: 2,
        },
        Case {
            name: "continuous actions",
            inputs: vec![v("ca_loop_simple.fb")],
            flags: &[],
            code: 0,
            says: &["they log a density, not a probability"],
            charts: 0,
        },
        Case {
            name: "multistep",
            inputs: vec![v("multistep_3_deferred_episodes.fb")],
            flags: &["--multistep"],
            code: 0,
            says: &["multistep"],
            charts: 1,
        },
        Case {
            name: "skipped events",
            inputs: vec![data(
                "invalid_joined_logs/no_interaction_but_with_observation.log",
            )],
            flags: &[],
            code: 0,
            says: &["outcome_without_interaction"],
            charts: 0,
        },
        Case {
            name: "damaged payload",
            inputs: vec![data("invalid_joined_logs/corrupt_joined_payload.log")],
            flags: &[],
            code: 0,
            says: &["invalid_joined_payload", "Where: the first 1 problems"],
            charts: 0,
        },
        Case {
            name: "cut short",
            inputs: vec![cut],
            flags: &[],
            code: 1,
            says: &["Damaged inputs", "the file was cut short", "<td>1040</td>"],
            charts: 0,
        },
        Case {
            name: "nothing kept",
            inputs: vec![v("average_reward_100_interactions.fb")],
            flags: &["--since", "2100-01-01"],
            code: 0,
            says: &[
                "No decision was kept: nothing to show over time.",
                "No decision was kept: no probability to show.",
            ],
            charts: 0,
        },
        Case {
            name: "empty",
            inputs: vec![empty],
            flags: &[],
            code: 1,
            says: &["No input is a joined log"],
            charts: 0,
        },
    ]
}

/// Every `data-stat="PATH" data-value="JSON"` pair of the page.
fn figures(html: &str) -> Vec<(String, Value)> {
    figures_named(html, "data-stat")
}

/// Every `ATTR="PATH" data-value="JSON"` pair of the page.
fn figures_named(html: &str, attr: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut rest = html;
    let start = format!("{attr}=\"");
    while let Some(i) = rest.find(&start) {
        rest = &rest[i + start.len()..];
        let end = rest.find('"').unwrap();
        let path = unescape(&rest[..end]);
        let v = rest.find("data-value=\"").unwrap();
        let tail = &rest[v + 12..];
        let value = unescape(&tail[..tail.find('"').unwrap()]);
        out.push((path, serde_json::from_str(&value).unwrap()));
        rest = tail;
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value at `path`; the page names only figures that exist (an
/// interval that one decision does not give is one null figure, not two
/// null ends).
fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    let pointer: String = path.split('.').map(|k| format!("/{k}")).collect();
    v.pointer(&pointer)
        .unwrap_or_else(|| panic!("{path} is not in the report"))
}

/// The JSON document in the page's `<script id="ID">`.
fn embedded(html: &str, id: &str) -> Value {
    let json = html
        .split(&format!("<script type=\"application/json\" id=\"{id}\">"))
        .nth(1)
        .and_then(|s| s.split("</script>").next())
        .unwrap_or_else(|| panic!("no #{id} in the page"))
        .replace("<\\/", "</");
    serde_json::from_str(&json).unwrap()
}

#[test]
fn report_figures_are_the_stats_figures() {
    let dir = scratch_dir("report");
    for case in cases(&dir) {
        let out = dir.join(format!("{}.html", case.name.replace(' ', "-")));
        let mut args: Vec<String> = vec!["report".into(), "-o".into(), p(&out).into()];
        args.extend(case.flags.iter().map(|s| s.to_string()));
        args.extend(case.inputs.iter().map(|i| p(i).to_string()));
        let r = fb(&args);
        assert_eq!(r.code, case.code, "{}: {}", case.name, r.stderr);
        let html = std::fs::read_to_string(&out).unwrap();
        // The same page on several threads: its sums are added in log
        // order, and the configuration changes are placed as on one.
        for threads in ["1", "3"] {
            let again = dir.join(format!("{}-{threads}.html", case.name.replace(' ', "-")));
            let mut more = args.clone();
            more[2] = p(&again).into();
            more.extend(["--threads".into(), threads.into()]);
            let r = fb(&more);
            assert_eq!(r.code, case.code, "{}: {}", case.name, r.stderr);
            let page = std::fs::read_to_string(&again).unwrap();
            assert!(
                page == html,
                "{}: the page differs on {threads} threads",
                case.name
            );
        }
        for text in case.says {
            assert!(
                html.contains(text),
                "{}: the page does not say {text:?}",
                case.name
            );
        }
        // Self-contained: no address, nothing loaded from elsewhere.
        for bad in ["http://", "https://", " src=", "<link", "url(", "@import"] {
            assert!(!html.contains(bad), "{}: the page holds {bad:?}", case.name);
        }
        assert!(html.len() < 2 << 20, "{}: {} bytes", case.name, html.len());
        let charts: usize = html
            .split("<body data-charts=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            charts >= case.charts,
            "{}: {charts} charts, expected {} or more",
            case.name,
            case.charts
        );
        let shown = figures(&html);
        if case.name == "empty" {
            assert_eq!(shown.len(), 3, "{}: inputs, logs, bytes", case.name);
            continue;
        }
        let mut stats_args: Vec<String> = vec!["stats".into(), "--json".into()];
        stats_args.extend(case.flags.iter().map(|s| s.to_string()));
        stats_args.extend(case.inputs.iter().map(|i| p(i).to_string()));
        let s = fb(&stats_args);
        assert_eq!(s.code, case.code, "{}: {}", case.name, s.stderr);
        let stats: Value = serde_json::from_str(&s.stdout).unwrap();
        assert!(shown.len() >= 10, "{}: {} figures", case.name, shown.len());
        for (path, value) in &shown {
            assert_eq!(
                at(&stats, path),
                value,
                "{}: {path} differs from fb stats --json",
                case.name
            );
        }
        // The whole report is in the page too, the same.
        assert_eq!(
            embedded(&html, "fb-stats"),
            stats,
            "{}: the embedded report",
            case.name
        );
        assert!(
            !html.contains("data-eval"),
            "{}: no policy asked",
            case.name
        );
    }
}

#[test]
fn report_marks_the_join_window_and_checkpoints() {
    let dir = scratch_dir("report-window");
    let out = dir.join("r.html");
    let log = data("valid_joined_logs/average_reward_100_interactions.fb");
    let r = fb(&["report", "--join-window", "1s", "-o", p(&out), p(&log)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("Join window: 1 s"), "no window in the page");
    assert!(html.contains("class=\"mark\""), "no marked bin");
    assert!(
        html.contains("2 checkpoints read"),
        "no configuration table"
    );
    // An existing page is not replaced without --force.
    let again = fb(&["report", "-o", p(&out), p(&log)]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
}

/// `fb report --policy`: the page's estimates are `fb evaluate --json
/// --by hour|day`'s (the windows the page's span chooses), figure by
/// figure, and its embedded evaluation is that report.
#[test]
fn report_policies_are_the_evaluate_figures() {
    let dir = scratch_dir("report-policies");
    let v = |name: &str| data(&format!("valid_joined_logs/{name}"));
    // More decisions than the evaluation's batch of records (4096): the
    // stats figures must still add up as fb stats adds them.
    // A folder of two such logs: one batch of sums per input, merged in
    // input order, as fb stats merges them.
    let folder = dir.join("two");
    std::fs::create_dir_all(&folder).unwrap();
    for seed in ["3", "4"] {
        let log = folder.join(format!("ccb-{seed}.fb"));
        let g = fb(&[
            "gen",
            "--problem-type",
            "ccb",
            "--events",
            "5000",
            "--seed",
            seed,
            "--force",
            "-o",
            p(&log),
        ]);
        assert_eq!(g.code, 0, "{}", g.stderr);
    }
    let big = folder.join("ccb-3.fb");
    let cases: [(&str, PathBuf, &[&str], usize); 6] = [
        ("cb", v("cb_joined_with_pdrop_05.fb"), &[], 1),
        ("ccb", big, &[], 1),
        ("ccb", folder.clone(), &[], 1),
        ("ccb", v("ccb_sum_reward_100_interactions.fb"), &[], 1),
        (
            "slates",
            v("slates_average_reward_100_interactions.fb"),
            &[],
            1,
        ),
        (
            "multistep",
            v("multistep_3_deferred_episodes.fb"),
            &["--multistep"],
            1,
        ),
    ];
    let policies = ["--policy", "uniform", "--policy", "baseline"];
    for (name, log, flags, kinds) in cases {
        let out = dir.join(format!(
            "{name}-{}.html",
            log.file_stem().unwrap().to_str().unwrap()
        ));
        let mut args: Vec<&str> = vec!["report", "-o", p(&out)];
        args.extend(policies);
        args.extend(flags);
        args.push(p(&log));
        let r = fb(&args);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let html = std::fs::read_to_string(&out).unwrap();
        // The same page on one thread and on three: the policies' records
        // are taken, and their sums added, in log order.
        for threads in ["1", "3"] {
            let again = out.with_extension(format!("{threads}.html"));
            let mut more = args.clone();
            more[2] = p(&again);
            more.extend(["--threads", threads]);
            let r = fb(&more);
            assert_eq!(r.code, 0, "{name}, {threads} threads: {}", r.stderr);
            let page = std::fs::read_to_string(&again).unwrap();
            assert!(
                page == html,
                "{name}: the page differs on {threads} threads"
            );
        }
        let by = html
            .split("data-eval-by=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or_else(|| panic!("{name}: no data-eval-by"));
        let mut eval: Vec<&str> = vec!["evaluate", "--json", "--by", by];
        eval.extend(policies);
        eval.extend(flags);
        eval.push(p(&log));
        let e = fb(&eval);
        assert_eq!(e.code, 0, "{name}: {}", e.stderr);
        let report: Value = serde_json::from_str(&e.stdout).unwrap();
        assert_eq!(embedded(&html, "fb-evaluate"), report, "{name}: embedded");
        let shown = figures_named(&html, "data-eval");
        // Per problem type and policy (logged, uniform, baseline): the
        // decisions and the estimate at least.
        assert!(
            shown.len() >= kinds * 3 * 2,
            "{name}: {} figures",
            shown.len()
        );
        for (path, value) in &shown {
            assert_eq!(at(&report, path), value, "{name}: {path}");
        }
        let mut stats: Vec<&str> = vec!["stats", "--json"];
        stats.extend(flags);
        stats.push(p(&log));
        let s = fb(&stats);
        assert_eq!(s.code, 0, "{name}: {}", s.stderr);
        let stats: Value = serde_json::from_str(&s.stdout).unwrap();
        for (path, value) in &figures(&html) {
            assert_eq!(at(&stats, path), value, "{name}: {path} (fb stats)");
        }
        let chart = format!("id=\"policies-{name}\"");
        assert!(html.contains(&chart), "{name}: no chart of the policies");
    }
}

#[test]
fn report_refuses_a_policy_that_is_not_one() {
    let dir = scratch_dir("report-bad-policy");
    let out = dir.join("r.html");
    let log = data("valid_joined_logs/cb_simple.log");
    let r = fb(&["report", "--policy", "nobody", "-o", p(&out), p(&log)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!out.exists(), "a page was written");
}
