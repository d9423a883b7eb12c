//! `fb stats`: counts, rewards, skipped events by reason, and the
//! counterfactual estimates, in text and JSON.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{data, fb, p, scratch};

#[test]
fn stats_json_on_a_small_log() {
    let out = fb(&[
        "stats",
        "--json",
        p(&data("valid_joined_logs/cb_simple.log")),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["events_read"], 2);
    assert_eq!(v["joined"], 1);
    assert_eq!(v["learnable"], 1);
    assert_eq!(v["outcomes"], 1);
    assert_eq!(v["first"]["event_id"], "91f71c8");
    assert_eq!(v["cost_sum"], -1.5);
    assert_eq!(v["by_problem_type"]["cb"]["reward_mean"], 1.5);
    assert_eq!(v["messages"]["REGULAR"], 1);
    assert_eq!(v["skipped_by_reason"], serde_json::json!({}));
    let table = fb(&["stats", p(&data("valid_joined_logs/cb_simple.log"))]);
    assert!(
        table
            .stdout
            .contains("decisions joined                         1 (decisions with their"),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("  cb: baseline, IPS "),
        "{}",
        table.stdout
    );
}

#[test]
fn stats_counts_skipped_events_by_reason() {
    let out = fb(&[
        "stats",
        "--json",
        p(&data(
            "invalid_joined_logs/no_interaction_but_with_observation.log",
        )),
    ]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["skipped_by_reason"]["outcome_without_interaction"], 2);
    assert_eq!(v["skipped_by_reason"]["no_interaction"], 1);
}

/// IPS and SNIPS against a hand computation on four CB decisions.
#[test]
fn stats_counterfactual_estimates_match_a_hand_computation() {
    use fb_schema::{
        LearningModeType, OutcomeEventArgs, ProblemType, RewardFunctionType, TimeStamp, UnionArg,
    };
    use fb_writer::{CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, PayloadSpec};
    // (chosen first, probability of the chosen action, reward)
    let decisions: [(&[u64], &[f32], f32); 4] = [
        (&[1, 2], &[0.5, 0.5], 1.0),
        (&[2, 1], &[0.25, 0.75], 0.0),
        (&[1, 2], &[0.625, 0.375], 2.0),
        (&[2, 1], &[0.5, 0.5], 1.0),
    ];
    let ctx = br#"{"U":{"a":1},"_multi":[{"x":1},{"x":2}]}"#;
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    w.checkpoint(&CheckpointConfig {
        reward_function: RewardFunctionType::Earliest,
        default_reward: 0.0,
        learning_mode: LearningModeType::Online,
        problem_type: ProblemType::CB,
        use_client_time: false,
    })
    .unwrap();
    let ids = ["a", "b", "c", "d"];
    for (i, (actions, probs, reward)) in decisions.iter().enumerate() {
        let t = TimeStamp::new(2024, 1, 1, 0, 0, i as u8, 0);
        let cb = PayloadSpec::Cb(CbSpec {
            action_ids: Some(actions),
            probabilities: Some(probs),
            context: Some(ctx),
            ..CbSpec::default()
        });
        let outcome = PayloadSpec::Outcome(OutcomeEventArgs {
            value: UnionArg::Numeric(*reward),
            index: UnionArg::None,
            action_taken: false,
        });
        w.regular(&[
            JoinedEventSpec::new(ids[i], t, cb),
            JoinedEventSpec::new(ids[i], t, outcome),
        ])
        .unwrap();
    }
    w.eof().unwrap();
    let log = scratch("estimates.fb");
    std::fs::write(&log, w.into_inner()).unwrap();

    let out = fb(&["stats", "--json", p(&log)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let c = &v["counterfactual"]["by_problem_type"]["cb"];
    assert!(
        c["warning"].as_str().unwrap().contains("only 4 decisions"),
        "{c}"
    );
    // By hand: the baseline (action 1) was taken in a (p .5, r 1) and
    // c (p .625, r 2): importance weights 2 and 1.6, terms 2, 0, 3.2, 0.
    // z = 1.959964 (the normal 97.5% quantile); Gaussian intervals with
    // the sample variance V = (Σx² − (Σx)²/n) / (n − 1), half-width
    // z √(V / n), as vw-estimators' gaussian.Interval:
    // logged = (1 + 0 + 2 + 1) / 4 = 1, V = (6 − 16/4) / 3
    // IPS    = (2 + 3.2) / 4 = 1.3,     V = (14.24 − 5.2²/4) / 3 = 7.48/3
    // SNIPS  = (2 + 3.2) / (2 + 1.6) = 1.4444…, delta method:
    //          half-width z √((2 (1 − m))² + (1.6 (2 − m))²) / 3.6
    let z = 1.959_963_984_540_054;
    let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-9;
    assert_eq!(c["decisions"], 4);
    assert!(close(&c["logged_policy_reward"]["value"], 1.0), "{c}");
    let logged_half = z * (2.0f64 / 3.0 / 4.0).sqrt();
    assert!(
        close(&c["logged_policy_reward"]["ci95"][1], 1.0 + logged_half),
        "{c}"
    );
    assert!(close(&c["baseline_ips"]["value"], 1.3), "{c}");
    let ips_half = z * (7.48f64 / 3.0 / 4.0).sqrt();
    assert!(close(&c["baseline_ips"]["ci95"][0], 1.3 - ips_half), "{c}");
    assert!(close(&c["baseline_ips"]["ci95"][1], 1.3 + ips_half), "{c}");
    let m = 5.2 / 3.6;
    assert!(close(&c["baseline_snips"]["value"], m), "{c}");
    let snips_half = z * ((2.0 * (1.0 - m)).powi(2) + (1.6 * (2.0 - m)).powi(2)).sqrt() / 3.6;
    assert!(
        close(&c["baseline_snips"]["ci95"][1], m + snips_half),
        "{c}"
    );
    // The same numbers as fb evaluate --policy baseline.
    let e = fb(&["evaluate", "--json", "--policy", "baseline", p(&log)]);
    let e: serde_json::Value = serde_json::from_str(&e.stdout).unwrap();
    let b = &e["by_problem_type"]["cb"]["policies"][1];
    assert_eq!(b["ips"], c["baseline_ips"]["value"]);
    assert_eq!(b["gaussian_ci95"], c["baseline_ips"]["ci95"]);
    assert_eq!(b["snips"], c["baseline_snips"]["value"]);
}

#[test]
fn stats_filters_like_convert_and_estimates_per_type_and_slot() {
    let dir = data("valid_joined_logs");
    let filters = [
        "--only",
        "ccb,slates",
        "--since",
        "2021-01-01T00:00:00+01:00",
    ];
    let mut args = vec!["stats", "--json"];
    args.extend(filters);
    args.push(p(&dir));
    let out = fb(&args);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let mut convert = vec!["convert", "-q"];
    convert.extend(filters);
    convert.push(p(&dir));
    let lines = fb(&convert).stdout.lines().count() as u64;
    assert!(lines > 0);
    assert_eq!(v["kept"].as_u64(), Some(lines), "{}", v);
    assert_eq!(
        v["kept"].as_u64().unwrap() + v["filtered_out"].as_u64().unwrap(),
        v["joined"].as_u64().unwrap()
    );
    let kinds: Vec<&String> = v["by_problem_type"].as_object().unwrap().keys().collect();
    assert_eq!(kinds, ["ccb", "slates"]);
    let c = &v["counterfactual"]["by_problem_type"];
    let estimated: Vec<&String> = c.as_object().unwrap().keys().collect();
    assert_eq!(estimated, ["ccb", "slates"]);
    // One estimate per CCB slot, each over every learnable CCB decision
    // with that slot.
    let slots = c["ccb"]["slots"].as_array().unwrap();
    assert!(slots.len() >= 2, "{}", c["ccb"]);
    assert_eq!(slots[0]["slot"], 0);
    assert!(
        slots[0]["decisions"].as_u64().unwrap()
            <= v["by_problem_type"]["ccb"]["learnable"].as_u64().unwrap()
    );
    assert_eq!(
        c["slates"]["decisions"],
        v["by_problem_type"]["slates"]["learnable"]
    );
    assert!(c["slates"]["covers"]
        .as_str()
        .unwrap()
        .contains("whole slate"));
    // The table says what the baseline is and how intervals are made.
    let mut table = vec!["stats"];
    table.extend(filters);
    table.push(p(&dir));
    let t = fb(&table).stdout;
    for needle in [
        "baseline policy",
        "ccb slot 1: baseline, IPS",
        "normal",
        "1/pass_probability",
    ] {
        assert!(t.contains(needle), "{needle}: {t}");
    }
    // Since after until: an error, as in convert.
    let bad = fb(&[
        "stats",
        "--since",
        "2022-01-01",
        "--until",
        "2021-01-01",
        p(&dir),
    ]);
    assert_eq!(bad.code, 2);
}

/// Decisions with pass_probability 0 cannot be weighted (1/0): stats
/// leaves them out of the estimates and says how many, in text and JSON,
/// and a log of nothing else says why there is no estimate.
#[test]
fn stats_says_what_it_leaves_out_of_the_estimates() {
    let dir = common::scratch_dir("stats-zero-pass");
    let log = dir.join("zero.fb");
    let run = fb(&[
        "gen",
        "-q",
        "--events",
        "5",
        "--pass-probability",
        "0",
        "-o",
        p(&log),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // (case, log, learnable decisions left out, decisions estimated)
    let corpus = data("valid_joined_logs");
    let cases = [
        ("all zero", log.as_path(), 5, 0),
        ("corpus", corpus.as_path(), 1, 116),
    ];
    for (case, log, left_out, estimated) in cases {
        let json = fb(&["stats", "--json", "-q", p(log)]);
        let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        let c = &v["counterfactual"];
        assert_eq!(c["left_out_pass_probability_0"], left_out, "{case}");
        assert_eq!(
            c["by_problem_type"]["cb"]["decisions"]
                .as_u64()
                .unwrap_or(0),
            estimated,
            "{case}"
        );
        assert!(
            c["method"].as_str().unwrap().contains("original rewards"),
            "{case}"
        );
        let text = fb(&["stats", "-q", p(log)]).stdout;
        assert!(
            text.contains(&format!("{left_out} learnable decision")),
            "{case}: {text}"
        );
        if estimated == 0 {
            assert!(
                text.contains("with a pass_probability above 0"),
                "{case}: {text}"
            );
        }
    }
}
