//! Generator → bytes → framing → joiner, checked against an independent
//! model (`model/mod.rs`) of what the join must give, computed from the
//! generator's own records of every decision it wrote.
//!
//! For arbitrary `GenConfig`s (every problem type, reward function,
//! learning mode, dedup, zstd, deferred/activated fractions, pass
//! probability, message sizes, checkpoints, default reward, client time),
//! in both compat modes, the joined events (`fb_join::JoinedEvents`) and
//! the DSJSON lines (`fb_join::convert`) must carry exactly (bit for bit)
//! the model's rewards, original rewards, per-slot rewards, costs, label
//! probabilities, skip-learn flags and weights, one event per decision
//! (per step for multistep), in order.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod model;

use fb_join::{
    Compat, Decision, DiagnosticKind, JoinedEvent, JoinedEvents, Options, StepTransform,
};
use fb_schema::RewardFunctionType;
use fb_writer::synth::{
    self, Decision as GenDecision, GenConfig, GenRecord, Limit, Problem, RewardDist,
};
use model::{Expected, Transform};
use proptest::prelude::*;
use serde_json::Value;

/// Proptest cases per problem type (five properties).
const CASES: u32 = 64;

fn generate(cfg: &GenConfig) -> (Vec<u8>, Vec<GenRecord>) {
    let mut records = Vec::new();
    let mut log = Vec::new();
    synth::generate_with(cfg, &mut log, |r| records.push(r)).expect("the config is valid");
    (log, records)
}

fn options(cfg: &GenConfig, compat: Compat, transform: Transform) -> Options {
    Options::default()
        .compat(compat)
        .multistep(cfg.problem == Problem::Multistep)
        .multistep_reward(match transform {
            Transform::SuffixMean => StepTransform::SuffixMean,
            Transform::SuffixSum => StepTransform::SuffixSum,
            Transform::Identity => StepTransform::Identity,
        })
}

/// Bit-exact equality of two f32s (so that 0.0 ≠ -0.0), with a message.
fn same(what: &str, at: &str, got: f32, want: f32) -> Result<(), TestCaseError> {
    prop_assert!(
        got.to_bits() == want.to_bits(),
        "{at}: {what}: got {got:?} ({:#010x}), model says {want:?} ({:#010x})",
        got.to_bits(),
        want.to_bits()
    );
    Ok(())
}

/// The joined events against the model.
fn check_events(
    cfg: &GenConfig,
    records: &[GenRecord],
    events: &[JoinedEvent],
    want: &[Expected],
) -> Result<(), TestCaseError> {
    let ids: Vec<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
    let want_ids: Vec<&str> = want.iter().map(|e| e.event_id.as_str()).collect();
    prop_assert_eq!(ids, want_ids, "event ids, in order");
    let per_record: usize = records
        .iter()
        .map(|r| match &r.decision {
            GenDecision::MultiStep { steps } => steps.len(),
            _ => 1,
        })
        .sum();
    prop_assert_eq!(events.len(), per_record, "one event per decision (step)");
    for (ev, w) in events.iter().zip(want) {
        let at = ev.event_id.as_str();
        prop_assert_eq!(ev.kind.name(), w.kind.name(), "{}: kind", at);
        prop_assert_eq!(ev.time, w.time, "{}: time", at);
        prop_assert_eq!(ev.skip_learn, w.skip_learn, "{}: skip-learn", at);
        same("weight", at, ev.weight(), w.weight)?;
        same(
            "pass probability",
            at,
            ev.pass_probability,
            cfg.pass_probability,
        )?;
        same("pdrop", at, ev.pdrop(), w.pdrop)?;
        same("original reward", at, ev.original_reward, w.original)?;
        if let Some(reward) = w.reward {
            same("reward", at, ev.reward, reward)?;
        }
        match &ev.decision {
            Decision::MultiSlot { slots, .. } if !w.slots.is_empty() => {
                let rewards = ev.slot_rewards();
                prop_assert_eq!(rewards.len(), w.slots.len(), "{}: slots", at);
                for (i, (slot, &(reward, original))) in slots.iter().zip(&w.slots).enumerate() {
                    same(&format!("slot {i} reward"), at, rewards[i], reward)?;
                    same(&format!("slot {i} reward"), at, slot.reward, reward)?;
                    same(
                        &format!("slot {i} original"),
                        at,
                        slot.original_reward,
                        original,
                    )?;
                }
            }
            Decision::MultiSlot { .. } => {
                prop_assert!(w.slots.is_empty(), "{}: CCB without slots", at)
            }
            Decision::Cb { probabilities, .. } => {
                prop_assert_eq!(ev.chosen_action(), w.chosen, "{}: chosen action", at);
                let p = probabilities[0] * ev.pass_probability;
                same("label probability", at, p, w.label_probability.unwrap())?;
            }
            Decision::Ca { .. } => {}
        }
    }
    Ok(())
}

fn num(line: &Value, path: &[&str]) -> f32 {
    let mut v = line;
    for key in path {
        v = &v[*key];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number in {line}")) as f32
}

/// The DSJSON lines against the model: costs are `-reward`, written from
/// f32 widened to f64, so parsing and narrowing gives the f32 back exactly.
fn check_dsjson(text: &[u8], want: &[Expected]) -> Result<(), TestCaseError> {
    let text = std::str::from_utf8(text).expect("DSJSON is UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    prop_assert_eq!(lines.len(), want.len(), "DSJSON lines");
    for (line, w) in lines.iter().zip(want) {
        let at = w.event_id.as_str();
        let v: Value = serde_json::from_str(line).expect("every line is JSON");
        prop_assert_eq!(
            v.get("_skipLearn").and_then(Value::as_bool),
            w.skip_learn.then_some(true),
            "{}: _skipLearn",
            at
        );
        match v.get("pdrop") {
            Some(_) => same("pdrop", at, num(&v, &["pdrop"]), w.pdrop)?,
            None => prop_assert!(w.pdrop == 0.0, "{}: pdrop missing", at),
        }
        match w.kind {
            Problem::Cb | Problem::Multistep => {
                prop_assert_eq!(v["EventId"].as_str(), Some(at));
                same("cost", at, num(&v, &["_label_cost"]), -w.reward.unwrap())?;
                same(
                    "_original_label_cost",
                    at,
                    num(&v, &["_original_label_cost"]),
                    -w.original,
                )?;
                same(
                    "_label_probability",
                    at,
                    num(&v, &["_label_probability"]),
                    w.label_probability.unwrap(),
                )?;
                let chosen = w.chosen.unwrap();
                prop_assert_eq!(v["_label_Action"].as_u64(), Some(chosen), "{}", at);
                prop_assert_eq!(v["_labelIndex"].as_u64(), Some(chosen - 1), "{}", at);
            }
            Problem::Ccb => {
                prop_assert_eq!(v["EventId"].as_str(), Some(at));
                let slots = v["_outcomes"].as_array().expect("_outcomes");
                prop_assert_eq!(slots.len(), w.slots.len(), "{}: _outcomes", at);
                for (i, (slot, &(reward, original))) in slots.iter().zip(&w.slots).enumerate() {
                    same(
                        &format!("slot {i} cost"),
                        at,
                        num(slot, &["_label_cost"]),
                        -reward,
                    )?;
                    same(
                        &format!("slot {i} original cost"),
                        at,
                        num(slot, &["_original_label_cost"]),
                        -original,
                    )?;
                }
            }
            Problem::Slates => {
                prop_assert_eq!(v["EventId"].as_str(), Some(at));
                same("cost", at, num(&v, &["_label_cost"]), -w.reward.unwrap())?;
            }
            Problem::Ca => {
                prop_assert_eq!(v["EventId"].as_str(), Some(at));
                same(
                    "cost",
                    at,
                    num(&v, &["_label_ca", "cost"]),
                    -w.reward.unwrap(),
                )?;
            }
            other => panic!("the generator wrote {other} decisions"),
        }
    }
    Ok(())
}

/// Prefixes a failure's message with where it happened.
fn within(
    what: impl std::fmt::Debug,
    result: Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    result.map_err(|e| match e {
        TestCaseError::Fail(reason) => {
            TestCaseError::fail(format!("{what:?}: {}", reason.message()))
        }
        reject => reject,
    })
}

/// Everything for one config, in both compat modes.
fn check(cfg: &GenConfig, transform: Transform) -> Result<(), TestCaseError> {
    let (log, records) = generate(cfg);
    let decisions = match cfg.limit {
        Limit::Events(n) => n as usize,
        Limit::Bytes(_) => records.len(),
    };
    prop_assert_eq!(records.len(), decisions, "one record per decision");
    for compat in [Compat::Sane, Compat::Reference] {
        let reference = compat == Compat::Reference;
        let want = model::expected(cfg, &records, reference, transform);
        let opts = options(cfg, compat, transform);

        let mut joined = JoinedEvents::new(&log[..], opts.clone());
        let events: Vec<JoinedEvent> = joined.by_ref().collect();
        prop_assert!(
            joined.framing_error().is_none(),
            "{:?}",
            joined.framing_error()
        );
        within(compat, check_events(cfg, &records, &events, &want))?;
        // Nothing is skipped; the only warning is apprentice mode where it
        // is not defined (CA, Slates), once per event.
        let diags = joined.joiner().diagnostics();
        let unsupported = want.iter().filter(|w| w.apprentice_unsupported).count() as u64;
        prop_assert_eq!(
            diags.count(DiagnosticKind::ApprenticeUnsupported),
            unsupported,
            "{:?}",
            diags.kept()
        );
        prop_assert_eq!(diags.total(), unsupported, "{:?}", diags.kept());

        let mut dsjson = Vec::new();
        let summary = fb_join::convert(&log[..], &mut dsjson, opts).expect("writes to a Vec");
        prop_assert!(summary.framing_error.is_none());
        within(format!("{compat:?} DSJSON"), check_dsjson(&dsjson, &want))?;
    }
    Ok(())
}

fn reward_function() -> impl Strategy<Value = RewardFunctionType> {
    prop_oneof![
        Just(RewardFunctionType::Earliest),
        Just(RewardFunctionType::Average),
        Just(RewardFunctionType::Median),
        Just(RewardFunctionType::Sum),
        Just(RewardFunctionType::Min),
        Just(RewardFunctionType::Max),
    ]
}

fn reward_dist() -> impl Strategy<Value = RewardDist> {
    prop_oneof![
        // Constants make ties; 0 and negatives hit the Max quirk.
        prop_oneof![
            Just(0.0f32),
            Just(1.0),
            Just(-1.0),
            Just(0.25),
            -5.0f32..5.0
        ]
        .prop_map(RewardDist::Constant),
        // Ranges that are all negative, straddle 0, or are all positive.
        (-3.0f32..3.0, 0.0f32..4.0).prop_map(|(low, width)| RewardDist::Uniform {
            low,
            high: low + width,
        }),
        (0.0f64..=1.0).prop_map(|p| RewardDist::Bernoulli { p }),
    ]
}

fn fraction() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0]
}

fn arb_config(problem: Problem) -> impl Strategy<Value = (GenConfig, Transform)> {
    let shape = (
        0u64..10,   // decisions
        1usize..6,  // actions
        1usize..4,  // slots
        1usize..12, // steps (10+ makes ids order as text: "-10" < "-2")
        0usize..5,  // outcomes per decision (step)
        reward_dist(),
        1usize..5, // decisions per message
        0u64..4,   // checkpoint every
    );
    let modes = (
        reward_function(),
        any::<bool>(),                                                  // apprentice
        any::<bool>(),                                                  // dedup
        any::<bool>(),                                                  // zstd
        fraction(),                                                     // deferred
        fraction(),                                                     // activated
        prop_oneof![Just(1.0f32), Just(0.5), Just(0.1), 0.01f32..=1.0], // pass probability
        prop_oneof![Just(0.0f32), Just(-1.0), -3.0f32..3.0],            // default reward
        any::<bool>(),                                                  // use client time
        any::<u64>(),                                                   // seed
        prop_oneof![
            Just(Transform::SuffixMean),
            Just(Transform::SuffixSum),
            Just(Transform::Identity),
        ],
    );
    (shape, modes).prop_map(
        move |(
            (decisions, actions, slots, steps, outcomes, reward, per_message, every),
            (
                reward_function,
                apprentice,
                dedup,
                zstd,
                deferred,
                activated,
                pass_probability,
                default_reward,
                use_client_time,
                seed,
                transform,
            ),
        )| {
            let cfg = GenConfig {
                problem,
                limit: Limit::Events(decisions),
                actions,
                action_pool: 0,
                // CCB gives every slot its own action.
                slots: if problem == Problem::Ccb {
                    slots.min(actions)
                } else {
                    slots
                },
                steps,
                outcomes,
                reward,
                deferred,
                activated,
                apprentice,
                pass_probability,
                dedup,
                zstd,
                events_per_message: per_message,
                checkpoint_every: every,
                reward_function,
                default_reward,
                use_client_time,
                seed,
            };
            (cfg, transform)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn cb_joins_to_the_model((cfg, transform) in arb_config(Problem::Cb)) {
        check(&cfg, transform)?;
    }

    #[test]
    fn ccb_joins_to_the_model((cfg, transform) in arb_config(Problem::Ccb)) {
        check(&cfg, transform)?;
    }

    #[test]
    fn slates_join_to_the_model((cfg, transform) in arb_config(Problem::Slates)) {
        check(&cfg, transform)?;
    }

    #[test]
    fn ca_joins_to_the_model((cfg, transform) in arb_config(Problem::Ca)) {
        check(&cfg, transform)?;
    }

    #[test]
    fn multistep_joins_to_the_model((cfg, transform) in arb_config(Problem::Multistep)) {
        check(&cfg, transform)?;
    }
}

/// Fixed configs for what random ones may miss: every reward function on
/// many outcomes with ties at whole seconds, in every problem type.
#[test]
fn every_reward_function_on_every_problem_type() {
    for &problem in Problem::ALL {
        for reward_function in [
            RewardFunctionType::Earliest,
            RewardFunctionType::Average,
            RewardFunctionType::Median,
            RewardFunctionType::Sum,
            RewardFunctionType::Min,
            RewardFunctionType::Max,
        ] {
            for apprentice in [false, true] {
                let cfg = GenConfig {
                    problem,
                    limit: Limit::Events(6),
                    actions: 4,
                    action_pool: 0,
                    slots: 3,
                    steps: 4,
                    outcomes: 7,
                    reward: RewardDist::Uniform {
                        low: -1.0,
                        high: 1.0,
                    },
                    deferred: 0.5,
                    activated: 0.5,
                    apprentice,
                    pass_probability: 0.3,
                    dedup: true,
                    zstd: true,
                    events_per_message: 2,
                    checkpoint_every: 2,
                    reward_function,
                    default_reward: -0.5,
                    use_client_time: false,
                    seed: 7,
                };
                check(&cfg, Transform::SuffixMean).unwrap_or_else(|e| {
                    panic!("{problem} {reward_function:?} apprentice={apprentice}: {e}")
                });
            }
        }
    }
}

/// The configs below make the reference's quirks matter (outcomes in the
/// same whole second with different values; all-negative rewards under
/// Max; sibling steps in the same second): the model must tell the two
/// modes apart on them, and the joiner must agree with it in both.
#[test]
fn the_quirks_are_exercised() {
    let base = GenConfig {
        limit: Limit::Events(20),
        outcomes: 40,
        reward: RewardDist::Uniform {
            low: -2.0,
            high: 2.0,
        },
        events_per_message: 4,
        default_reward: 0.75,
        seed: 11,
        ..GenConfig::default()
    };
    fn rewards(v: &[Expected]) -> Vec<Option<f32>> {
        v.iter().map(|e| e.reward).collect()
    }
    fn ids(v: &[Expected]) -> Vec<&str> {
        v.iter().map(|e| e.event_id.as_str()).collect()
    }
    type Differs = fn(&[Expected], &[Expected]) -> bool;
    let cases: [(&str, GenConfig, Differs); 3] = [
        (
            "earliest: ties at whole seconds",
            GenConfig {
                reward_function: RewardFunctionType::Earliest,
                ..base.clone()
            },
            |a, b| rewards(a) != rewards(b),
        ),
        (
            "max: only negative rewards",
            GenConfig {
                reward_function: RewardFunctionType::Max,
                reward: RewardDist::Uniform {
                    low: -2.0,
                    high: -1.0,
                },
                outcomes: 3,
                ..base.clone()
            },
            |a, b| rewards(a) != rewards(b),
        ),
        (
            // Sibling steps in one whole second go by id under the
            // reference, and ids past 9 sort as text ("-10" before "-9"):
            // a hundred episodes of twelve steps hold such a pair.
            "multistep: sibling steps in the same second",
            GenConfig {
                problem: Problem::Multistep,
                limit: Limit::Events(100),
                steps: 12,
                use_client_time: true,
                outcomes: 2,
                reward_function: RewardFunctionType::Sum,
                ..base.clone()
            },
            |a, b| ids(a) != ids(b),
        ),
    ];
    for (name, cfg, differs) in cases {
        let (_, records) = generate(&cfg);
        let sane = model::expected(&cfg, &records, false, Transform::SuffixMean);
        let reference = model::expected(&cfg, &records, true, Transform::SuffixMean);
        assert!(differs(&sane, &reference), "{name}: both modes agree");
        check(&cfg, Transform::SuffixMean).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
