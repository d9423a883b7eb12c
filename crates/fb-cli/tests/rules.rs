//! Rules every command keeps: numbers that rewards and probabilities
//! can be, what happens to an output when a run fails or is
//! interrupted, when an output may be replaced, pipes, standard input and
//! terminals.

mod common;

use common::{data, fb, p, scratch_dir};

/// A reward or probability that is not a finite float32 (`nan`, `inf`,
/// `1e400`) is refused by every flag that takes one, before anything is
/// written: DSJSON would hold `null`, which VW cannot read.
#[test]
fn non_finite_rewards_and_probabilities_are_refused() {
    let dir = scratch_dir("rules-finite");
    let log = data("valid_joined_logs/cb_simple.log");
    let raw = data("reward_functions/cb/cb_v2.fb");
    let obs = data("reward_functions/cb/f-reward_3obs_v2.fb");
    let out = dir.join("out");
    for value in ["nan", "NaN", "inf", "-inf", "1e400", "-3.5e38x"] {
        // (case, arguments)
        let cases: [(&str, Vec<&str>); 7] = [
            ("convert", vec!["convert", p(&log), "-o", p(&out)]),
            ("stats", vec!["stats", p(&log)]),
            ("export", vec!["export", p(&log), "-o", p(&out)]),
            (
                "join",
                vec![
                    "join",
                    "--interactions",
                    p(&raw),
                    "--observations",
                    p(&obs),
                    "-o",
                    p(&out),
                ],
            ),
            ("gen", vec!["gen", "--events", "3", "-o", p(&out)]),
            ("gen --reward", vec!["gen", "--events", "3", "-o", p(&out)]),
            ("gen --pass-probability", vec!["gen", "-o", p(&out)]),
        ];
        for (case, mut args) in cases {
            let flag = match case {
                "gen --reward" => format!("--reward=constant:{value}"),
                "gen --pass-probability" => format!("--pass-probability={value}"),
                _ => format!("--default-reward={value}"),
            };
            args.push(&flag);
            let run = fb(&args);
            assert_eq!(run.code, 2, "{case} {value}: {}", run.stderr);
            let said = run.stderr.to_lowercase();
            assert!(
                said.contains(&value.trim_start_matches('-').to_lowercase())
                    || said.contains("inf"),
                "{case} {value}: {}",
                run.stderr
            );
            assert!(run.stdout.is_empty(), "{case} {value}");
            assert!(!out.exists(), "{case} {value}: an output was written");
        }
    }
    // Finite values, negative ones included, are taken.
    let run = fb(&["convert", "--default-reward", "-1.5e3", p(&log)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}
