//! Synthetic joined logs, deterministic from a seed.
//!
//! [`generate`] writes FILEMAGIC, HEADER, a CHECKPOINT before the first
//! REGULAR message (and again every [`GenConfig::checkpoint_every`]
//! messages), REGULAR messages of [`GenConfig::events_per_message`]
//! decisions each, and EOF. Every decision is planned as a [`GenRecord`]
//! first; the record is what gets written, and [`generate_with`] hands it to
//! a callback once its message is out, so tests can compute expected
//! rewards on their own.
//!
//! Memory stays constant however big the log: one REGULAR message is
//! assembled at a time and streamed to the output.
//!
//! What a decision looks like:
//! - a REGULAR message starts with one `DedupInfo` event when dedup is on,
//!   holding every action its contexts refer to as `{"__aid":N}`;
//! - then, per decision: the interaction, then its outcomes (an activation
//!   among them, if any) in the order of their client times, as a client
//!   sends them. Outcome times are 1 to 301 s after the decision.
//! - Client times come a little (under a second) before the enqueued
//!   times, never earlier than the client time of the interaction before
//!   (a client makes its events in order), so the raw streams a client
//!   would have written are the log's events of each stream in client
//!   time order, which [`crate::raw::take_apart_by_time`] restores with a
//!   reorder window of [`STREAM_DISORDER_MICROS`].
//! - CB: action ids are 1-based positions in `_multi`, the chosen one
//!   first, epsilon-greedy (epsilon 0.2) probabilities in the same order;
//!   no outcome index.
//! - CCB: slot `i` chooses among the actions earlier slots left; even slots
//!   have an id (`slot-<i>`, also in `_slots`), odd ones none; outcomes are
//!   indexed by slot number or, for slots with an id, half the time by the
//!   id; baseline actions are `0..slots`.
//! - Slates: every slot has its own `actions` actions (`_slot_id` in
//!   `_multi`), action ids are indices within the slot; baseline 0 per slot;
//!   outcomes have no index.
//! - CA: action uniform in `[0, 100)`, pdf value in `[0.005, 0.05)`.
//! - Multistep: one episode per REGULAR message: an `EpisodeEvent`, then
//!   `steps` steps (ids `<episode>-<n>`, each following the previous one or,
//!   one time in five, an earlier one), then per step `outcomes` outcomes
//!   indexed by the step id, and half the time one episodic outcome without
//!   index. All events carry the episode id as `meta.id`.

mod config;
mod context;
mod record;
mod ticks;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write;

use fb_format::splitmix::SplitMix64;
use fb_schema::{OutcomeEventArgs, TimeStamp, UnionArg};

pub use config::{GenConfig, Limit, RewardDist};
/// The problem type of the decisions generated.
pub use fb_format::Problem;
pub use record::{
    Decision, GenRecord, GenSummary, OutcomeIndex, OutcomeRecord, SlotRecord, StepRecord,
};
pub use ticks::{ticks_from_civil, timestamp_from_ticks, TICKS_PER_SECOND};

use crate::error::Result;
use crate::spec::{
    CaSpec, CbSpec, DedupSpec, Encoding, JoinedEventSpec, MetaSpec, MultiSlotSpec, MultiStepSpec,
    PayloadSpec, SlotSpec,
};
use crate::writer::LogWriter;

/// Application id written in every event's metadata.
pub const APP_ID: &str = "fb-synth";

/// Epsilon of the epsilon-greedy probabilities.
const EPSILON: f32 = 0.2;

/// An outcome comes 1 to this many seconds (and a fraction of a second)
/// after its decision.
const OUTCOME_DELAY_SECS: u64 = 300;

/// How much earlier (in µs) than an event before it in the log an event
/// of the same raw stream can be: an outcome comes up to 301 s after its
/// decision, and the outcomes of the decisions after it may come sooner.
/// Interactions and episodes are in client time order already.
pub const STREAM_DISORDER_MICROS: i64 = (OUTCOME_DELAY_SECS as i64 + 1) * 1_000_000;

/// [`generate_with`] without a callback.
pub fn generate<W: Write>(config: &GenConfig, out: W) -> Result<GenSummary> {
    generate_with(config, out, |_| {})
}

/// Writes the log `config` describes to `out`, then flushes it; calls
/// `on_record` for every decision once its REGULAR message is written.
pub fn generate_with<W: Write, F: FnMut(GenRecord)>(
    config: &GenConfig,
    out: W,
    mut on_record: F,
) -> Result<GenSummary> {
    config.validate()?;
    let mut gen = Generator::new(config);
    let mut writer = LogWriter::new(out);
    let mut summary = GenSummary::default();
    writer.file_magic(fb_format::SUPPORTED_VERSION)?;
    let seed = config.seed.to_string();
    writer.header(
        &[
            ("generator", "fb-writer synth"),
            ("problem_type", config.problem.name()),
            ("seed", &seed),
        ],
        timestamp_from_ticks(gen.clock),
    )?;
    let per_message = match config.problem {
        Problem::Multistep => 1,
        _ => config.events_per_message as u64,
    };
    let checkpoint = config.checkpoint_config();
    let mut records = Vec::with_capacity(config.events_per_message);
    loop {
        let count = match config.limit {
            Limit::Events(n) if summary.decisions >= n => break,
            Limit::Events(n) => per_message.min(n - summary.decisions),
            Limit::Bytes(n) if writer.offset() >= n => break,
            Limit::Bytes(_) => per_message,
        };
        let every = config.checkpoint_every;
        if summary.regular_messages == 0 || (every > 0 && summary.regular_messages % every == 0) {
            writer.checkpoint(&checkpoint)?;
            summary.checkpoints += 1;
            gen.model_id.clear();
            let _ = write!(
                gen.model_id,
                "synth-{:x}-{}",
                config.seed, summary.checkpoints
            );
        }
        records.clear();
        for _ in 0..count {
            records.push(gen.plan());
        }
        let index = writer.messages_written();
        summary.events += gen.write_message(&mut writer, &records)?;
        let offset = writer.end_regular()?;
        summary.regular_messages += 1;
        summary.decisions += count;
        for mut record in records.drain(..) {
            record.message_index = index;
            record.message_offset = offset;
            on_record(record);
        }
    }
    writer.eof()?;
    writer.flush()?;
    summary.bytes = writer.offset();
    summary.messages = writer.messages_written();
    Ok(summary)
}

/// Ticks since 1970 of a `TimeStamp` (the inverse of
/// [`timestamp_from_ticks`]), for ordering recorded times.
pub fn ticks_from_timestamp(ts: &TimeStamp) -> u64 {
    ticks_from_civil(
        ts.year(),
        ts.month(),
        ts.day(),
        ts.hour(),
        ts.minute(),
        ts.second(),
    ) + u64::from(ts.subsecond())
}

fn meta_spec(
    id: &str,
    client: TimeStamp,
    pass_probability: f32,
    encoding: Encoding,
) -> MetaSpec<'_> {
    MetaSpec {
        id: Some(id),
        client_time: Some(client),
        app_id: Some(APP_ID),
        payload_type: None,
        pass_probability,
        encoding,
    }
}

struct Generator<'c> {
    cfg: &'c GenConfig,
    rng: SplitMix64,
    /// Time of the latest decision, in ticks since 1970.
    clock: u64,
    /// Client time of the latest interaction-side event, in ticks.
    client_clock: u64,
    model_id: String,
    /// Pool items an action may be drawn from (per slot for slates).
    pool: u64,
}

impl<'c> Generator<'c> {
    fn new(cfg: &'c GenConfig) -> Self {
        Self {
            cfg,
            rng: SplitMix64::new(cfg.seed),
            clock: ticks_from_civil(2024, 1, 1, 0, 0, 0),
            client_clock: 0,
            model_id: String::new(),
            pool: match cfg.action_pool {
                0 => (cfg.actions as u64).saturating_mul(4).max(16),
                // Distinct actions in a decision need as many in the pool.
                n => n.max(cfg.actions as u64),
            },
        }
    }

    /// A UUID-shaped id (version 4 layout) from the PRNG.
    fn uuid(&mut self) -> String {
        let a = self.rng.next_u64();
        let b = self.rng.next_u64();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xFFFF,
            a & 0xFFF,
            0x8000 | ((b >> 48) & 0x3FFF),
            b & 0xFFFF_FFFF_FFFF
        )
    }

    /// Advances the clock to the next decision: (enqueued, client) ticks.
    /// The client time is up to a second earlier (the time the event took
    /// to reach the queue), but never before the one of the event before:
    /// a client makes its events one after the other.
    fn tick(&mut self) -> (u64, u64) {
        self.clock += 1 + self.rng.below_one_draw(2 * TICKS_PER_SECOND);
        let lag = self.rng.below_one_draw(TICKS_PER_SECOND);
        self.client_clock = (self.client_clock + 1).max(self.clock.saturating_sub(lag));
        (self.clock, self.client_clock)
    }

    /// Epsilon-greedy over `n` choices: the order (chosen first, then the
    /// rest ascending) and the probabilities in that order.
    fn choose(&mut self, n: usize) -> (Vec<usize>, Vec<f32>) {
        let top = self.rng.below_one_draw(n as u64) as usize;
        let base = EPSILON / n as f32;
        let prob = |i: usize| if i == top { base + 1.0 - EPSILON } else { base };
        let r = self.rng.unit_f32();
        let mut acc = 0.0f32;
        let mut chosen = n.saturating_sub(1);
        for i in 0..n {
            acc += prob(i);
            if r < acc {
                chosen = i;
                break;
            }
        }
        let order: Vec<usize> = std::iter::once(chosen)
            .chain((0..n).filter(|&i| i != chosen))
            .collect();
        let probabilities = order.iter().map(|&i| prob(i)).collect();
        (order, probabilities)
    }

    /// Appends `"_multi":[...]` for these pool keys, inline or as dedup
    /// references (recording the entries in `dedup`).
    fn multi_json(
        &self,
        out: &mut String,
        keys: &[(u64, Option<usize>)],
        dedup: &mut Vec<(u64, String)>,
    ) {
        out.push_str("\"_multi\":[");
        for (i, &(key, slot)) in keys.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if self.cfg.dedup {
                let id = context::dedup_id(key);
                let _ = write!(out, "{{\"__aid\":{id}}}");
                if !dedup.iter().any(|(known, _)| *known == id) {
                    let mut text = String::new();
                    context::action_json(&mut text, key, slot);
                    dedup.push((id, text));
                }
            } else {
                context::action_json(out, key, slot);
            }
        }
        out.push(']');
    }

    /// `n` consecutive pool keys from a random start (offset by `base`).
    fn pool_keys(&mut self, n: usize, base: u64, slot: Option<usize>) -> Vec<(u64, Option<usize>)> {
        let start = self.rng.below_one_draw(self.pool);
        (0..n as u64)
            .map(|i| (base + (start + i) % self.pool, slot))
            .collect()
    }

    fn outcome_time(&mut self, after: u64) -> (TimeStamp, TimeStamp) {
        let enqueued = after
            + (1 + self.rng.below_one_draw(OUTCOME_DELAY_SECS)) * TICKS_PER_SECOND
            + self.rng.below_one_draw(TICKS_PER_SECOND);
        let client = enqueued.saturating_sub(self.rng.below_one_draw(TICKS_PER_SECOND));
        (timestamp_from_ticks(enqueued), timestamp_from_ticks(client))
    }

    fn outcome(&mut self, after: u64, index: OutcomeIndex) -> OutcomeRecord {
        let value = self.cfg.reward.sample(&mut self.rng);
        let (enqueued, client_time) = self.outcome_time(after);
        OutcomeRecord {
            value: Some(value),
            index,
            action_taken: false,
            enqueued,
            client_time,
        }
    }

    /// Adds an activation to `outcomes` (put in time order with the others
    /// by [`Generator::plan`]).
    fn activate(&mut self, outcomes: &mut Vec<OutcomeRecord>, after: u64, index: OutcomeIndex) {
        let (enqueued, client_time) = self.outcome_time(after);
        outcomes.push(OutcomeRecord {
            value: None,
            index,
            action_taken: true,
            enqueued,
            client_time,
        });
    }

    /// Plans one decision (one episode).
    fn plan(&mut self) -> GenRecord {
        let cfg = self.cfg;
        let (enqueued, client) = self.tick();
        let event_id = self.uuid();
        let mut context = String::with_capacity(256);
        let mut dedup = Vec::new();
        let mut outcomes = Vec::with_capacity(cfg.outcomes + 1);
        let mut deferred = false;
        let mut activated = false;
        if cfg.problem != Problem::Multistep {
            deferred = self.rng.chance(cfg.deferred);
            activated = self.rng.chance(cfg.activated);
            context.push('{');
            context::user_json(&mut context, &mut self.rng);
            context.push(',');
        }
        let decision = match cfg.problem {
            Problem::Cb => {
                let keys = self.pool_keys(cfg.actions, 0, None);
                self.multi_json(&mut context, &keys, &mut dedup);
                let (order, probabilities) = self.choose(cfg.actions);
                for _ in 0..cfg.outcomes {
                    let o = self.outcome(enqueued, OutcomeIndex::None);
                    outcomes.push(o);
                }
                Decision::Cb {
                    actions: order.iter().map(|&i| i as u64 + 1).collect(),
                    probabilities,
                }
            }
            Problem::Ccb => {
                let keys = self.pool_keys(cfg.actions, 0, None);
                self.multi_json(&mut context, &keys, &mut dedup);
                let ids: Vec<Option<String>> = (0..cfg.slots)
                    .map(|i| (i % 2 == 0).then(|| format!("slot-{i}")))
                    .collect();
                context.push(',');
                context::slots_json(&mut context, &ids);
                let mut left: Vec<u32> = (0..cfg.actions as u32).collect();
                let mut slots = Vec::with_capacity(cfg.slots);
                for id in ids {
                    let (order, probabilities) = self.choose(left.len());
                    let actions: Vec<u32> =
                        order.iter().filter_map(|&i| left.get(i).copied()).collect();
                    if let Some(&chosen) = actions.first() {
                        left.retain(|&a| a != chosen);
                    }
                    slots.push(SlotRecord {
                        id,
                        actions,
                        probabilities,
                    });
                }
                for _ in 0..cfg.outcomes {
                    let slot = self.rng.below_one_draw(slots.len() as u64) as usize;
                    let index = match slots.get(slot).and_then(|s| s.id.clone()) {
                        Some(id) if self.rng.chance(0.5) => OutcomeIndex::Literal(id),
                        _ => OutcomeIndex::Numeric(slot as i32),
                    };
                    let o = self.outcome(enqueued, index);
                    outcomes.push(o);
                }
                Decision::Ccb {
                    baseline: (0..cfg.slots as i32).collect(),
                    slots,
                }
            }
            Problem::Slates => {
                let mut keys = Vec::with_capacity(cfg.actions * cfg.slots);
                for slot in 0..cfg.slots {
                    keys.extend(self.pool_keys(cfg.actions, slot as u64 * self.pool, Some(slot)));
                }
                self.multi_json(&mut context, &keys, &mut dedup);
                context.push(',');
                context::slots_json(&mut context, &vec![None; cfg.slots]);
                let mut slots = Vec::with_capacity(cfg.slots);
                for _ in 0..cfg.slots {
                    let (order, probabilities) = self.choose(cfg.actions);
                    slots.push(SlotRecord {
                        id: None,
                        actions: order.iter().map(|&i| i as u32).collect(),
                        probabilities,
                    });
                }
                for _ in 0..cfg.outcomes {
                    let o = self.outcome(enqueued, OutcomeIndex::None);
                    outcomes.push(o);
                }
                Decision::Slates {
                    slots,
                    baseline: vec![0; cfg.slots],
                }
            }
            Problem::Ca => {
                context::ca_json(&mut context, &mut self.rng);
                let action = 100.0 * self.rng.unit_f32();
                let pdf_value = 0.005 + 0.045 * self.rng.unit_f32();
                for _ in 0..cfg.outcomes {
                    let o = self.outcome(enqueued, OutcomeIndex::None);
                    outcomes.push(o);
                }
                Decision::Ca { action, pdf_value }
            }
            // Multistep; `validate` refuses the problem types this
            // generator does not know.
            _ => {
                let steps = self.plan_steps(&event_id, &mut dedup, &mut outcomes);
                Decision::MultiStep { steps }
            }
        };
        if cfg.problem != Problem::Multistep {
            context.push('}');
            if activated {
                self.activate(&mut outcomes, enqueued, OutcomeIndex::None);
            }
        }
        // As the client sends them, and a joiner appends them.
        outcomes.sort_by_key(|o| ticks_from_timestamp(&o.client_time));
        GenRecord {
            message_index: 0,
            message_offset: 0,
            event_id,
            problem: cfg.problem,
            enqueued: timestamp_from_ticks(enqueued),
            client_time: timestamp_from_ticks(client),
            pass_probability: cfg.pass_probability,
            deferred,
            activated,
            learning_mode: cfg.learning_mode(),
            model_id: self.model_id.clone(),
            context,
            dedup,
            decision,
            outcomes,
        }
    }

    fn plan_steps(
        &mut self,
        episode: &str,
        dedup: &mut Vec<(u64, String)>,
        outcomes: &mut Vec<OutcomeRecord>,
    ) -> Vec<StepRecord> {
        let cfg = self.cfg;
        let mut steps: Vec<StepRecord> = Vec::with_capacity(cfg.steps);
        let mut step_ticks = Vec::with_capacity(cfg.steps);
        for n in 0..cfg.steps {
            let (enqueued, client) = self.tick();
            let previous_id = match n {
                0 => None,
                _ if self.rng.chance(0.2) => steps
                    .get(self.rng.below_one_draw(n as u64) as usize)
                    .map(|s| s.id.clone()),
                _ => steps.last().map(|s| s.id.clone()),
            };
            let mut context = String::with_capacity(256);
            context.push('{');
            context::user_json(&mut context, &mut self.rng);
            let _ = write!(context, ",\"TStep\":{{\"n\":{n}}},");
            let keys = self.pool_keys(cfg.actions, 0, None);
            self.multi_json(&mut context, &keys, dedup);
            context.push('}');
            let (order, probabilities) = self.choose(cfg.actions);
            let deferred = self.rng.chance(cfg.deferred);
            let activated = self.rng.chance(cfg.activated);
            steps.push(StepRecord {
                id: format!("{episode}-{n}"),
                previous_id,
                actions: order.iter().map(|&i| i as u64 + 1).collect(),
                probabilities,
                context,
                deferred,
                activated,
                enqueued: timestamp_from_ticks(enqueued),
                client_time: timestamp_from_ticks(client),
            });
            step_ticks.push(enqueued);
        }
        for (step, &ticks) in steps.iter().zip(&step_ticks) {
            for _ in 0..cfg.outcomes {
                let o = self.outcome(ticks, OutcomeIndex::Literal(step.id.clone()));
                outcomes.push(o);
            }
            if step.activated {
                self.activate(outcomes, ticks, OutcomeIndex::Literal(step.id.clone()));
            }
        }
        if cfg.outcomes > 0 && self.rng.chance(0.5) {
            let last = step_ticks.last().copied().unwrap_or(self.clock);
            let o = self.outcome(last, OutcomeIndex::None);
            outcomes.push(o);
        }
        steps
    }

    /// Pushes the events of `records` (one REGULAR message); returns how
    /// many.
    fn write_message<W: Write>(
        &mut self,
        writer: &mut LogWriter<W>,
        records: &[GenRecord],
    ) -> Result<u64> {
        let cfg = self.cfg;
        let encoding = if cfg.zstd {
            Encoding::Zstd
        } else {
            Encoding::Identity
        };
        let pass = cfg.pass_probability;
        let mut events = 0u64;
        if cfg.dedup {
            let mut seen = HashSet::new();
            let mut ids = Vec::new();
            let mut values = Vec::new();
            for (id, text) in records.iter().flat_map(|r| &r.dedup) {
                if seen.insert(*id) {
                    ids.push(*id);
                    values.push(text.as_str());
                }
            }
            if let (false, Some(first)) = (ids.is_empty(), records.first()) {
                let dedup_event = self.uuid();
                writer.push_event(&JoinedEventSpec {
                    meta: meta_spec(&dedup_event, first.client_time, pass, encoding),
                    enqueued: first.enqueued,
                    payload: PayloadSpec::Dedup(DedupSpec {
                        ids: &ids,
                        values: &values,
                    }),
                })?;
                events += 1;
            }
        }
        for record in records {
            let id = record.event_id.as_str();
            let model_id = Some(record.model_id.as_str());
            let learning_mode = record.learning_mode;
            let context = Some(record.context.as_bytes());
            let interaction = |payload| JoinedEventSpec {
                meta: meta_spec(id, record.client_time, pass, encoding),
                enqueued: record.enqueued,
                payload,
            };
            match &record.decision {
                Decision::Cb {
                    actions,
                    probabilities,
                } => {
                    writer.push_event(&interaction(PayloadSpec::Cb(CbSpec {
                        deferred_action: record.deferred,
                        action_ids: Some(actions),
                        context,
                        probabilities: Some(probabilities),
                        model_id,
                        learning_mode,
                    })))?;
                    events += 1;
                }
                Decision::Ccb { slots, baseline } | Decision::Slates { slots, baseline } => {
                    let slot_specs: Vec<SlotSpec<'_>> = slots
                        .iter()
                        .map(|s| SlotSpec {
                            action_ids: &s.actions,
                            probabilities: &s.probabilities,
                            id: s.id.as_deref(),
                        })
                        .collect();
                    let spec = MultiSlotSpec {
                        context,
                        slots: Some(&slot_specs),
                        model_id,
                        deferred_action: record.deferred,
                        baseline_actions: Some(baseline),
                        learning_mode,
                    };
                    let payload = match record.decision {
                        Decision::Ccb { .. } => PayloadSpec::Ccb(spec),
                        _ => PayloadSpec::Slates(spec),
                    };
                    writer.push_event(&interaction(payload))?;
                    events += 1;
                }
                Decision::Ca { action, pdf_value } => {
                    writer.push_event(&interaction(PayloadSpec::Ca(CaSpec {
                        deferred_action: record.deferred,
                        action: *action,
                        context,
                        pdf_value: *pdf_value,
                        model_id,
                        learning_mode,
                    })))?;
                    events += 1;
                }
                Decision::MultiStep { steps } => {
                    writer.push_event(&interaction(PayloadSpec::Episode {
                        episode_id: Some(id),
                    }))?;
                    events += 1;
                    for step in steps {
                        writer.push_event(&JoinedEventSpec {
                            meta: meta_spec(id, step.client_time, pass, encoding),
                            enqueued: step.enqueued,
                            payload: PayloadSpec::MultiStep(MultiStepSpec {
                                event_id: Some(&step.id),
                                previous_id: step.previous_id.as_deref(),
                                action_ids: Some(&step.actions),
                                context: Some(step.context.as_bytes()),
                                probabilities: Some(&step.probabilities),
                                model_id,
                                deferred_action: step.deferred,
                            }),
                        })?;
                        events += 1;
                    }
                }
            }
            for outcome in &record.outcomes {
                let args = OutcomeEventArgs {
                    value: outcome.value.map_or(UnionArg::None, UnionArg::Numeric),
                    index: match &outcome.index {
                        OutcomeIndex::None => UnionArg::None,
                        OutcomeIndex::Numeric(i) => UnionArg::Numeric(*i),
                        OutcomeIndex::Literal(s) => UnionArg::Literal(s),
                    },
                    action_taken: outcome.action_taken,
                };
                writer.push_event(&JoinedEventSpec {
                    meta: meta_spec(id, outcome.client_time, pass, encoding),
                    enqueued: outcome.enqueued,
                    payload: PayloadSpec::Outcome(args),
                })?;
                events += 1;
            }
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reward_dist_parses_and_displays() {
        for (text, dist) in [
            ("constant", RewardDist::Constant(1.0)),
            ("constant:2.5", RewardDist::Constant(2.5)),
            (
                "uniform",
                RewardDist::Uniform {
                    low: 0.0,
                    high: 1.0,
                },
            ),
            (
                "uniform:-1:1",
                RewardDist::Uniform {
                    low: -1.0,
                    high: 1.0,
                },
            ),
            ("bernoulli", RewardDist::Bernoulli { p: 0.5 }),
            ("Bernoulli:0.25", RewardDist::Bernoulli { p: 0.25 }),
        ] {
            assert_eq!(text.parse::<RewardDist>(), Ok(dist), "{text}");
            assert_eq!(dist.to_string().parse::<RewardDist>(), Ok(dist), "{text}");
        }
        for bad in ["", "gauss", "uniform:1", "constant:x", "bernoulli:nan"] {
            assert!(bad.parse::<RewardDist>().is_err(), "{bad}");
        }
    }

    #[test]
    fn choose_puts_the_chosen_action_first_and_sums_to_one() {
        let cfg = GenConfig::default();
        let mut gen = Generator::new(&cfg);
        for n in 1..10 {
            let (order, probs) = gen.choose(n);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            let sum: f32 = probs.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5, "{n}: {sum}");
        }
    }

    #[test]
    fn the_action_pool_sets_how_often_actions_repeat() {
        // Keys drawn for 500 decisions of 4 actions: distinct ones.
        let distinct = |action_pool: u64| {
            let cfg = GenConfig {
                action_pool,
                ..GenConfig::default()
            };
            let mut gen = Generator::new(&cfg);
            let mut keys = std::collections::BTreeSet::new();
            for _ in 0..500 {
                keys.extend(
                    gen.pool_keys(cfg.actions, 0, None)
                        .into_iter()
                        .map(|(k, _)| k),
                );
            }
            keys.len()
        };
        assert_eq!(distinct(0), 16);
        assert_eq!(distinct(100), 100);
        // A pool smaller than a decision is widened to `actions`.
        assert_eq!(distinct(2), 4);
        assert!(distinct(1 << 40) > 1900, "{}", distinct(1 << 40));
    }
}
