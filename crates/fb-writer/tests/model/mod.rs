//! An independent model of what joining a synthetic log must give, computed
//! from the generator's own [`GenRecord`]s and the rules of SEMANTICS.md
//! (§3–§5, §8). It shares no code with `fb-join`: every reward function is
//! written out here, in `f32` and file order, with the reference's quirks
//! switched on by `reference`.

use fb_schema::{RewardFunctionType, TimeStamp};
use fb_writer::synth::{
    Decision, GenConfig, GenRecord, OutcomeIndex, OutcomeRecord, Problem, StepRecord,
};

/// How multistep step rewards are transformed (SEMANTICS.md §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transform {
    SuffixMean,
    SuffixSum,
    Identity,
}

/// What one joined event must carry.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    pub kind: Problem,
    /// The event id (the step id for multistep).
    pub event_id: String,
    /// The event time (enqueued, or client time when configured).
    pub time: TimeStamp,
    /// The learning reward (`None` for CCB, whose rewards are per slot).
    pub reward: Option<f32>,
    /// f(outcomes) (CB, CCB, Slates, CA), the step's own f(...) for
    /// multistep (0.0 under the reference's quirk).
    pub original: f32,
    /// CCB: (reward, original reward) per slot.
    pub slots: Vec<(f32, f32)>,
    /// Deferred and never activated.
    pub skip_learn: bool,
    /// 0 when skip-learn, else 1 / pass probability.
    pub weight: f32,
    /// CB and multistep: p[0] × pass probability.
    pub label_probability: Option<f32>,
    /// CB and multistep: the chosen action.
    pub chosen: Option<u64>,
    /// `1 - pass_probability`.
    pub pdrop: f32,
    /// The joiner must warn that apprentice mode is not defined here.
    pub apprentice_unsupported: bool,
}

/// (year, month, day, hour, minute, second, subsecond): compares like
/// calendar time for valid dates.
type TimeKey = (u16, u8, u8, u8, u8, u8, u32);

/// A reward signal as the reward functions see it.
#[derive(Debug, Clone, Copy)]
struct Signal {
    value: f32,
    time: TimeKey,
}

fn time_key(t: &TimeStamp, reference: bool) -> TimeKey {
    // [quirk] the reference drops the subsecond when comparing times.
    let sub = if reference { 0 } else { t.subsecond() };
    (
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        sub,
    )
}

/// The time the joiner must use for an event.
fn event_time(cfg: &GenConfig, enqueued: TimeStamp, client: TimeStamp) -> TimeStamp {
    if cfg.use_client_time {
        client
    } else {
        enqueued
    }
}

/// Reward signals of `outcomes`, activations left out.
fn signals<'a>(
    cfg: &GenConfig,
    outcomes: impl IntoIterator<Item = &'a OutcomeRecord>,
    reference: bool,
) -> Vec<Signal> {
    outcomes
        .into_iter()
        .filter(|o| !o.action_taken)
        .map(|o| Signal {
            // The generator writes every non-activation with a numeric value.
            value: o.value.expect("outcomes carry a value"),
            time: time_key(&event_time(cfg, o.enqueued, o.client_time), reference),
        })
        .collect()
}

/// f(outcomes), SEMANTICS.md §4.
fn reward_of(cfg: &GenConfig, s: &[Signal], reference: bool) -> f32 {
    if s.is_empty() {
        return cfg.default_reward;
    }
    match cfg.reward_function {
        RewardFunctionType::Earliest => {
            // The first of the smallest time.
            let mut best = s[0];
            for x in &s[1..] {
                if x.time < best.time {
                    best = *x;
                }
            }
            best.value
        }
        RewardFunctionType::Average => {
            let mut sum = 0.0f32;
            for x in s {
                sum += x.value;
            }
            sum / s.len() as f32
        }
        RewardFunctionType::Median => {
            let mut v: Vec<f32> = s.iter().map(|x| x.value).collect();
            v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
            let n = v.len();
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        }
        RewardFunctionType::Sum => {
            let mut sum = 0.0f32;
            for x in s {
                sum += x.value;
            }
            sum
        }
        RewardFunctionType::Min => {
            let mut m = s[0].value;
            for x in &s[1..] {
                if x.value < m {
                    m = x.value;
                }
            }
            m
        }
        RewardFunctionType::Max if reference => {
            // [quirk] starts from the smallest positive (normal) float, so
            // values at or below it never win; none winning gives the
            // default reward.
            let mut m = f32::MIN_POSITIVE;
            let mut found = false;
            for x in s {
                if x.value > m {
                    m = x.value;
                    found = true;
                }
            }
            if found {
                m
            } else {
                cfg.default_reward
            }
        }
        RewardFunctionType::Max => {
            let mut m = s[0].value;
            for x in &s[1..] {
                if x.value > m {
                    m = x.value;
                }
            }
            m
        }
        other => panic!("the generator wrote reward function {other:?}"),
    }
}

fn weight(skip_learn: bool, pass: f32) -> f32 {
    if skip_learn {
        0.0
    } else {
        1.0 / pass
    }
}

/// Every joined event `records` must give, in output order.
pub fn expected(
    cfg: &GenConfig,
    records: &[GenRecord],
    reference: bool,
    transform: Transform,
) -> Vec<Expected> {
    let mut out = Vec::new();
    for r in records {
        match &r.decision {
            Decision::MultiStep { steps } => {
                multistep(cfg, r, steps, reference, transform, &mut out)
            }
            decision => out.push(single(cfg, r, decision, reference)),
        }
    }
    out
}

fn single(cfg: &GenConfig, r: &GenRecord, decision: &Decision, reference: bool) -> Expected {
    let apprentice = cfg.apprentice;
    let pass = cfg.pass_probability;
    let all = signals(cfg, &r.outcomes, reference);
    let original = reward_of(cfg, &all, reference);
    let skip_learn = r.deferred && !r.outcomes.iter().any(|o| o.action_taken);
    let mut e = Expected {
        kind: r.problem,
        event_id: r.event_id.clone(),
        time: event_time(cfg, r.enqueued, r.client_time),
        reward: Some(original),
        original,
        slots: Vec::new(),
        skip_learn,
        weight: weight(skip_learn, pass),
        label_probability: None,
        chosen: None,
        pdrop: 1.0 - pass,
        apprentice_unsupported: false,
    };
    match decision {
        Decision::Cb {
            actions,
            probabilities,
        } => {
            if apprentice {
                // Action 1 is the baseline.
                e.reward = Some(if actions[0] == 1 { 1.0 } else { 0.0 });
            }
            e.label_probability = Some(probabilities[0] * pass);
            e.chosen = Some(actions[0]);
        }
        Decision::Ccb { slots, baseline } => {
            e.reward = None;
            for (i, slot) in slots.iter().enumerate() {
                // Numeric index = slot index; literal = slot id; no index:
                // ignored.
                let mine = r.outcomes.iter().filter(|o| match &o.index {
                    OutcomeIndex::Numeric(n) => *n >= 0 && *n as usize == i,
                    OutcomeIndex::Literal(id) => slot.id.as_deref() == Some(id.as_str()),
                    OutcomeIndex::None => false,
                });
                let slot_original = reward_of(cfg, &signals(cfg, mine, reference), reference);
                let slot_reward = if apprentice {
                    if i64::from(slot.actions[0]) == i64::from(baseline[i]) {
                        1.0
                    } else {
                        0.0
                    }
                } else {
                    slot_original
                };
                e.slots.push((slot_reward, slot_original));
            }
        }
        Decision::Slates { .. } | Decision::Ca { .. } => {
            if apprentice {
                e.reward = Some(cfg.default_reward);
                e.apprentice_unsupported = true;
            }
        }
        Decision::MultiStep { .. } => unreachable!("handled by multistep()"),
    }
    e
}

/// Depth-first from the roots, siblings by (time, id).
fn step_order(cfg: &GenConfig, steps: &[StepRecord], reference: bool) -> Vec<usize> {
    let key = |k: usize| {
        let s = &steps[k];
        (
            time_key(&event_time(cfg, s.enqueued, s.client_time), reference),
            s.id.clone(),
        )
    };
    // The step a step hangs under. The reference files a step under its
    // previous id even when that names no step or itself, and never
    // reaches it then (usize::MAX stands for "nowhere"); by default such a
    // step is a root.
    let parent = |k: usize| {
        let p = steps[k].previous_id.as_ref().filter(|p| !p.is_empty())?;
        match steps.iter().position(|s| &s.id == p) {
            Some(at) if at != k || reference => Some(at),
            _ if reference => Some(usize::MAX),
            _ => None,
        }
    };
    fn visit(
        k: usize,
        steps: usize,
        parent: &dyn Fn(usize) -> Option<usize>,
        key: &dyn Fn(usize) -> (TimeKey, String),
        out: &mut Vec<usize>,
    ) {
        out.push(k);
        let mut children: Vec<usize> = (0..steps).filter(|&c| parent(c) == Some(k)).collect();
        children.sort_by_key(|&c| key(c));
        for c in children {
            visit(c, steps, parent, key, out);
        }
    }
    let mut roots: Vec<usize> = (0..steps.len()).filter(|&k| parent(k).is_none()).collect();
    roots.sort_by_key(|&k| key(k));
    let mut out = Vec::new();
    for root in roots {
        visit(root, steps.len(), &parent, &key, &mut out);
    }
    out
}

fn multistep(
    cfg: &GenConfig,
    r: &GenRecord,
    steps: &[StepRecord],
    reference: bool,
    transform: Transform,
    out: &mut Vec<Expected>,
) {
    let pass = cfg.pass_probability;
    let order = step_order(cfg, steps, reference);
    // An outcome with a literal index is that step's own; any other is
    // episodic and belongs to every step. A step's reward is over the
    // episodic outcomes, then its own.
    let of_step = |s: &StepRecord| -> Vec<&OutcomeRecord> {
        let episodic = r
            .outcomes
            .iter()
            .filter(|o| !matches!(&o.index, OutcomeIndex::Literal(_)));
        let own = r
            .outcomes
            .iter()
            .filter(|o| matches!(&o.index, OutcomeIndex::Literal(id) if *id == s.id));
        episodic.chain(own).collect()
    };
    let own: Vec<f32> = order
        .iter()
        .map(|&k| {
            let mine = of_step(&steps[k]);
            let mut list = signals(cfg, mine, reference);
            if reference {
                // [quirk] the reference drops outcome times in multistep:
                // `earliest` is the first of the list.
                for x in &mut list {
                    x.time = Default::default();
                }
            }
            reward_of(cfg, &list, reference)
        })
        .collect();
    let n = own.len();
    let transformed: Vec<f32> = (0..n)
        .map(|i| {
            // The reference accumulates suffix sums from the last step back.
            let mut sum = 0.0f32;
            for k in (i..n).rev() {
                sum += own[k];
            }
            match transform {
                Transform::Identity => own[i],
                Transform::SuffixSum => sum,
                Transform::SuffixMean => sum / (n - i) as f32,
            }
        })
        .collect();
    for (i, &k) in order.iter().enumerate() {
        let s = &steps[k];
        let skip_learn = s.deferred && !of_step(s).iter().any(|o| o.action_taken);
        out.push(Expected {
            kind: Problem::Multistep,
            event_id: s.id.clone(),
            time: event_time(cfg, s.enqueued, s.client_time),
            reward: Some(transformed[i]),
            // [quirk] the reference never computes it for steps.
            original: if reference { 0.0 } else { own[i] },
            slots: Vec::new(),
            skip_learn,
            weight: weight(skip_learn, pass),
            label_probability: Some(s.probabilities[0] * pass),
            chosen: Some(s.actions[0]),
            pdrop: 1.0 - pass,
            apprentice_unsupported: false,
        });
    }
}
