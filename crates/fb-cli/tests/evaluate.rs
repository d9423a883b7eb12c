//! `fb evaluate`: estimates of target policies against hand computations,
//! prediction files and their errors, windows.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{data, fb, p, scratch};
use serde_json::Value;

/// Four CB decisions, a second apart: (actions, chosen first; their
/// probabilities; reward).
const DECISIONS: [(&[u64], &[f32], f32); 4] = [
    (&[1, 2], &[0.5, 0.5], 1.0),
    (&[2, 1], &[0.25, 0.75], 0.0),
    (&[1, 2], &[0.625, 0.375], 2.0),
    (&[2, 1], &[0.5, 0.5], 1.0),
];

/// The log of [`DECISIONS`] (event ids a, b, c, d), written once.
fn four_decisions() -> std::path::PathBuf {
    use fb_schema::{
        LearningModeType, OutcomeEventArgs, ProblemType, RewardFunctionType, TimeStamp, UnionArg,
    };
    use fb_writer::{CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, PayloadSpec};
    let log = scratch("evaluate-four.fb");
    if log.exists() {
        return log;
    }
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
    for (i, (actions, probs, reward)) in DECISIONS.iter().enumerate() {
        // Two decisions on each of two days.
        let t = TimeStamp::new(2024, 1, 1 + (i as u8) / 2, 0, 0, i as u8, 0);
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
    // Written aside and renamed: tests run in parallel.
    let tmp = log.with_extension(format!("tmp{:?}", std::thread::current().id()));
    std::fs::write(&tmp, w.into_inner()).unwrap();
    std::fs::rename(&tmp, &log).unwrap();
    log
}

fn json(args: &[&str]) -> Value {
    let out = fb(args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64()
        .is_some_and(|x| (x - want).abs() <= 1e-12 * want.abs().max(1.0))
}

/// Each policy's IPS and SNIPS by hand. Weights w = q / p of the logged
/// action, rewards 1, 0, 2, 1:
/// - logged: w = 1: IPS = SNIPS = 4/4;
/// - baseline (action 1): w = 2, 0, 1.6, 0: Σwr = 5.2, Σw = 3.6;
/// - uniform (1/2): w = 1, 2, 0.8, 1: Σwr = 3.6, Σw = 4.8;
/// - constant:2: w = 0, 4, 0, 2: Σwr = 2, Σw = 6.
#[test]
fn policies_match_a_hand_computation() {
    let log = four_decisions();
    let v = json(&[
        "evaluate",
        "--json",
        "--policy",
        "baseline",
        "--policy",
        "uniform",
        "--policy",
        "constant:2",
        p(&log),
    ]);
    let cb = &v["by_problem_type"]["cb"];
    assert_eq!(cb["decisions"], 4);
    assert!(close(&cb["smallest_logged_probability"], 0.25), "{cb}");
    let cases = [
        ("logged", 1.0, 1.0),
        ("baseline", 1.3, 5.2 / 3.6),
        ("uniform", 0.9, 0.75),
        ("constant:2", 0.5, 2.0 / 6.0),
    ];
    for (i, (name, ips, snips)) in cases.iter().enumerate() {
        let got = &cb["policies"][i];
        assert_eq!(got["policy"], *name);
        assert!(close(&got["ips"], *ips), "{name}: {got}");
        assert!(close(&got["snips"], *snips), "{name}: {got}");
        // A reward of 2: no interval that needs rewards in [0, 1].
        assert!(got["clopper_pearson_ci95"].is_null(), "{name}: {got}");
        assert!(got["cressie_read_ci95"].is_null(), "{name}: {got}");
        assert!(got["gaussian_ci95"].is_array(), "{name}: {got}");
    }
    let warnings = cb["warnings"].to_string();
    assert!(warnings.contains("only 4 decisions"), "{warnings}");
    let table = fb(&["evaluate", "--policy", "uniform", p(&log)]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(table.stdout.contains("policy uniform"), "{}", table.stdout);
    let row = format!("{:<36} 0.900000", "IPS (Gaussian CI)");
    assert!(table.stdout.contains(&row), "{}", table.stdout);
}

/// VW numbers its actions from 0: `1:1` is action 2 of the DSJSON.
#[test]
fn predictions_file_is_read_along_the_events() {
    let log = four_decisions();
    let pred = scratch("evaluate-ok.pred");
    std::fs::write(&pred, "1:1,0:0\n0:0.5,1:0.5 b\n\n1:1\n1:1\n").unwrap();
    let arg = format!("predictions:{}", p(&pred));
    let v = json(&["evaluate", "--json", "--policy", &arg, p(&log)]);
    let got = &v["by_problem_type"]["cb"]["policies"][1];
    // q = 0, 0.5, 0, 1 of the logged actions: w = 0, 2, 0, 2; Σwr = 2.
    assert!(close(&got["ips"], 0.5), "{got}");
    assert!(close(&got["snips"], 0.5), "{got}");
}

#[test]
fn bad_policies_and_prediction_files_are_refused() {
    let log = four_decisions();
    let cases: [(&str, &str, &str); 6] = [
        ("fewer", "0:1\n0:1\n0:1\n", "fewer examples than the log"),
        (
            "more",
            "0:1\n0:1\n0:1\n0:1\n0:1\n",
            "more examples than the log",
        ),
        (
            "unknown action",
            "0:1\n5:1\n0:1\n0:1\n",
            "action 5 is not among",
        ),
        ("sum", "0:1\n0:0.5,1:0.2\n0:1\n0:1\n", "sum to"),
        ("syntax", "0:1\n0=1\n0:1\n0:1\n", "not action:probability"),
        ("tag", "0:1 a\n0:1 c\n0:1\n0:1\n", "tagged c"),
    ];
    for (name, text, says) in cases {
        let pred = scratch(&format!("evaluate-{}.pred", name.replace(' ', "-")));
        std::fs::write(&pred, text).unwrap();
        let arg = format!("predictions:{}", p(&pred));
        let out = fb(&["evaluate", "--policy", &arg, p(&log)]);
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{name}: {}", out.stderr);
    }
    // The wrong problem type, an unknown policy.
    let ccb = data("valid_joined_logs/ccb_simple.log");
    let out = fb(&["evaluate", "--policy", "constant:1", p(&ccb)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("is for CB"), "{}", out.stderr);
    let ca = data("valid_joined_logs/ca_loop_simple.fb");
    let pred = scratch("evaluate-ca.pred");
    std::fs::write(&pred, "0:1\n").unwrap();
    let arg = format!("predictions:{}", p(&pred));
    let out = fb(&["evaluate", "--policy", &arg, p(&ca)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("CA decision"), "{}", out.stderr);
    let out = fb(&["evaluate", "--policy", "greedy", p(&log)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("not a policy"), "{}", out.stderr);
}

#[test]
fn every_problem_type_of_the_corpus_is_estimated() {
    // (problem type, corpus log, flags)
    let cases = [
        (
            "cb",
            "valid_joined_logs/average_reward_100_interactions.fb",
            "",
        ),
        (
            "ccb",
            "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
            "",
        ),
        (
            "slates",
            "valid_joined_logs/slates_average_reward_100_interactions.fb",
            "",
        ),
        (
            "multistep",
            "valid_joined_logs/multistep_2_episodes.fb",
            "--multistep",
        ),
    ];
    for (kind, rel, flag) in cases {
        let log = data(rel);
        let mut args = vec![
            "evaluate", "--json", "--policy", "baseline", "--policy", "uniform",
        ];
        if !flag.is_empty() {
            args.push(flag);
        }
        args.push(p(&log));
        let v = json(&args);
        let k = &v["by_problem_type"][kind];
        assert!(k["decisions"].as_u64().unwrap() > 0, "{kind}: {v}");
        let policies = k["policies"].as_array().unwrap();
        assert_eq!(policies.len(), 3, "{kind}");
        match kind {
            "ccb" => {
                assert!(policies[2]["slots"].as_array().unwrap().len() >= 2, "{k}");
                let m = &policies[2]["multislot"];
                assert!(m["slots"].as_array().unwrap().len() >= 2, "{k}");
                assert!(m["r_overall"].is_f64(), "{k}");
            }
            "slates" => assert!(policies[2]["pseudo_inverse"].is_f64(), "{k}"),
            _ => assert!(policies[2]["ips"].is_f64(), "{k}"),
        }
    }
    let ca = json(&[
        "evaluate",
        "--json",
        p(&data("valid_joined_logs/ca_loop_simple.fb")),
    ]);
    assert!(ca["not_estimated"]["ca"].as_u64().unwrap() > 0, "{ca}");
}

#[test]
fn windows_as_json_and_csv() {
    let log = four_decisions();
    let v = json(&[
        "evaluate",
        "--json",
        "--by",
        "day",
        "--policy",
        "uniform",
        p(&log),
    ]);
    let w = v["windows"].as_array().unwrap();
    assert_eq!(w.len(), 2, "{v}");
    assert_eq!(w[0]["start"], "2024-01-01T00:00:00Z");
    assert_eq!(w[0]["by_problem_type"]["cb"]["decisions"], 2);
    // Day one: uniform w = 1, 2 with rewards 1, 0: IPS 1/2.
    assert!(close(
        &w[0]["by_problem_type"]["cb"]["policies"][1]["ips"],
        0.5
    ));
    let out = fb(&[
        "evaluate",
        "--by",
        "day",
        "--format",
        "csv",
        "--policy",
        "uniform",
        p(&log),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut lines = out.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("window,problem_type,policy,estimator,decisions,value,low,high")
    );
    assert!(
        out.stdout
            .contains("\n2024-01-01T00:00:00Z,cb,\"uniform\",ips,2,0.5,"),
        "{}",
        out.stdout
    );
}

/// A log `fb gen -q ARGS` makes, generated once per test process under
/// `name` (a test that comes second finds it; each writes aside first).
fn generated(name: &str, args: &[&str]) -> std::path::PathBuf {
    let log = scratch(name);
    if !log.exists() {
        let tmp = log.with_extension(format!("tmp{:?}.fb", std::thread::current().id()));
        let mut all = vec!["gen", "-q"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", p(&tmp)]);
        let out = fb(&all);
        assert_eq!(out.code, 0, "{}", out.stderr);
        std::fs::rename(&tmp, &log).unwrap();
    }
    log
}

/// Three generated slates of two slots of four actions each.
fn three_slates() -> std::path::PathBuf {
    generated(
        "evaluate-slates.fb",
        &[
            "--problem-type",
            "slates",
            "--events",
            "3",
            "--slots",
            "2",
            "--actions",
            "4",
            "--seed",
            "7",
        ],
    )
}

/// VW's slates predictions: a line per slot, actions counted from 0
/// within the slot, a blank line after each slate.
#[test]
fn slates_prediction_files() {
    let log = three_slates();
    // Uniform over each slot's four actions: the pseudo-inverse weight is
    // 1 − 2 + Σ (1/4) / p, as for `--policy uniform`.
    let uniform = "0:0.25,1:0.25,2:0.25,3:0.25\n";
    let block = format!("{uniform}{uniform}\n");
    let pred = scratch("evaluate-slates-ok.pred");
    std::fs::write(&pred, block.repeat(3)).unwrap();
    let arg = format!("predictions:{}", p(&pred));
    let v = json(&[
        "evaluate",
        "--json",
        "--policy",
        &arg,
        "--policy",
        "uniform",
        p(&log),
    ]);
    let pols = &v["by_problem_type"]["slates"]["policies"];
    assert_eq!(pols[1]["pseudo_inverse"], pols[2]["pseudo_inverse"], "{v}");
    assert!(pols[1]["pseudo_inverse"].is_f64(), "{v}");
    let cases: [(&str, String, &str); 5] = [
        ("fewer", block.repeat(2), "fewer examples than the log"),
        ("more", block.repeat(4), "more examples than the log"),
        (
            "unknown action",
            format!("{block}{block}{uniform}0:0.5,4:0.5\n\n"),
            "action 4 is not among",
        ),
        (
            "sum",
            format!("{block}{block}{uniform}0:0.5,1:0.2\n\n"),
            "sum to",
        ),
        (
            "slots",
            format!("{block}{block}{uniform}\n"),
            "the event has 2 slots",
        ),
    ];
    for (name, text, says) in cases {
        let pred = scratch(&format!("evaluate-slates-{}.pred", name.replace(' ', "-")));
        std::fs::write(&pred, text).unwrap();
        let arg = format!("predictions:{}", p(&pred));
        let out = fb(&["evaluate", "--policy", &arg, p(&log)]);
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{name}: {}", out.stderr);
    }
}

/// Three generated CA decisions (actions in [0, 100)).
fn three_ca() -> std::path::PathBuf {
    generated(
        "evaluate-ca.fb",
        &["--problem-type", "ca", "--events", "3", "--seed", "7"],
    )
}

/// CA decisions are estimated with --cats, counted without.
#[test]
fn ca_with_cats_parameters() {
    let log = three_ca();
    let v = json(&["evaluate", "--json", "--policy", "baseline", p(&log)]);
    assert_eq!(v["not_estimated"]["ca"], 3, "{v}");
    assert!(
        v["not_estimated"]["ca_why"]
            .as_str()
            .unwrap()
            .contains("--cats"),
        "{v}"
    );
    assert!(v["by_problem_type"]["ca"].is_null(), "{v}");
    let table = fb(&["evaluate", p(&log)]);
    assert!(
        table.stdout.contains("--cats NUM_ACTIONS"),
        "{}",
        table.stdout
    );
    // One bin over [0, 100] with bandwidth 100: every policy's density
    // is 1/100 at every action, as the uniform policy's.
    let v = json(&[
        "evaluate",
        "--json",
        "--cats",
        "1,100,0,100",
        "--policy",
        "baseline",
        "--policy",
        "uniform",
        "--policy",
        "constant:3.5",
        p(&log),
    ]);
    assert_eq!(v["not_estimated"]["ca"], 0, "{v}");
    assert!(v["not_estimated"]["ca_why"].is_null(), "{v}");
    assert_eq!(v["cats"]["num_actions"], 1, "{v}");
    let ca = &v["by_problem_type"]["ca"];
    assert_eq!(ca["decisions"], 3, "{v}");
    let uniform = &ca["policies"][2]["ips"];
    assert!(uniform.is_f64(), "{v}");
    for i in [1, 3] {
        assert!(
            close(&ca["policies"][i]["ips"], uniform.as_f64().unwrap()),
            "{i}: {v}"
        );
    }
    let pred = scratch("evaluate-ca-ok.pred");
    std::fs::write(&pred, "50,0.01\n10.5,0.01\n\n99,0.01 \n").unwrap();
    let arg = format!("predictions:{}", p(&pred));
    let v = json(&[
        "evaluate",
        "--json",
        "--cats",
        "1,100,0,100",
        "--policy",
        &arg,
        p(&log),
    ]);
    let ca = &v["by_problem_type"]["ca"];
    assert!(
        close(&ca["policies"][1]["ips"], uniform.as_f64().unwrap()),
        "{v}"
    );
}

#[test]
fn bad_ca_options_and_prediction_files_are_refused() {
    let log = three_ca();
    let cases: [(&str, &[&str], &str); 7] = [
        ("cats syntax", &["--cats", "8,5,0"], "four numbers"),
        (
            "cats range",
            &["--cats", "8,5,10,0"],
            "MIN must be below MAX",
        ),
        (
            "fewer",
            &["--cats", "8,5,0,100", "--policy", "predictions:FEWER"],
            "fewer examples",
        ),
        (
            "more",
            &["--cats", "8,5,0,100", "--policy", "predictions:MORE"],
            "more examples",
        ),
        (
            "not action,pdf",
            &["--cats", "8,5,0,100", "--policy", "predictions:SYNTAX"],
            "not action,pdf_value",
        ),
        (
            "CA predictions without --cats",
            &["--policy", "predictions:MORE"],
            "CA with --cats",
        ),
        (
            "a CA constant for CB",
            &["--policy", "constant:2.5"],
            "is for CA decisions",
        ),
    ];
    let files = [
        ("FEWER", "1,0.1\n2,0.1\n"),
        ("MORE", "1,0.1\n2,0.1\n3,0.1\n4,0.1\n"),
        ("SYNTAX", "1,0.1\n2:0.1\n3,0.1\n"),
    ];
    let cb = four_decisions();
    for (name, args, says) in cases {
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        for a in &mut args {
            for (key, text) in files {
                if a.ends_with(key) {
                    let f = scratch(&format!("evaluate-ca-{key}.pred"));
                    std::fs::write(&f, text).unwrap();
                    *a = format!("predictions:{}", p(&f));
                }
            }
        }
        let input = if name.contains("for CB") { &cb } else { &log };
        args.insert(0, "evaluate".into());
        args.push(p(input).into());
        let out = fb(&args);
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{name}: {}", out.stderr);
    }
}
