//! Multistep episodes (SEMANTICS.md §8): steps in depth-first order, each
//! rewarded over the episodic outcomes then its own, and transformed.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use fb_format::{EventView, Position};
use fb_schema::{PayloadType, TimeStamp};

use super::{Joiner, Sink};
use crate::diag::DiagnosticKind;
use crate::event::{Decision, JoinedEvent, Outcome, OutcomeIndex};
use crate::interaction::{extract_step, Step};
use crate::{time, Compat, Problem};

impl Joiner {
    /// Multistep (§8): steps ordered depth-first, each rewarded over the
    /// episodic outcomes then its own. The reference takes the whole
    /// message as one batch; by default each episode (metadata id) is one.
    pub(super) fn multistep_group<S: Sink>(
        &mut self,
        at: Position,
        id: &str,
        events: &[(u32, EventView<'_>)],
        sink: &mut S,
    ) {
        let reference = self.opts.compat == Compat::Reference;
        let mut steps: Vec<(Step, TimeStamp, f32)> = Vec::new();
        // Beside each step: its client time and its episode (metadata id).
        let mut whence: Vec<(Option<TimeStamp>, String)> = Vec::new();
        let mut position: HashMap<String, usize> = HashMap::new();
        // Steps whose id came again: under the reference they keep their
        // place and reward (the transform sees them) but give no line.
        let mut repeated: HashSet<usize> = HashSet::new();
        let mut outcomes: Vec<Outcome> = Vec::new();
        for (_, view) in events {
            match view.payload_type() {
                PayloadType::Outcome => {
                    if let Some(o) = self.outcome(at, view) {
                        outcomes.push(o);
                    }
                }
                PayloadType::MultiStep => {
                    let step = match self.decoder.payload(view) {
                        Ok(payload) => extract_step(&payload),
                        Err(err) => Err((DiagnosticKind::InvalidPayload, err.to_string())),
                    };
                    match step {
                        Ok(step) => {
                            if let Some(&k) = position.get(&step.id) {
                                let what = if reference {
                                    "no line for it, its reward still counts in the transform"
                                } else {
                                    "the repeat is skipped"
                                };
                                self.diag(
                                    at,
                                    DiagnosticKind::DuplicateStep,
                                    Some(id),
                                    format!("step `{}` seen twice: {what}", step.id),
                                );
                                if reference {
                                    repeated.insert(k);
                                }
                                continue;
                            }
                            let time = self.time_of(at, view);
                            position.insert(step.id.clone(), steps.len());
                            steps.push((step, time, view.pass_probability()));
                            whence.push((view.client_time(), view.id.to_string()));
                        }
                        Err((kind, detail)) => {
                            self.diag(at, kind, Some(id), format!("{detail}: step skipped"))
                        }
                    }
                }
                other => self.diag(
                    at,
                    DiagnosticKind::ProblemTypeMismatch,
                    Some(id),
                    format!("payload type {} in a multistep episode: ignored", other.0),
                ),
            }
        }
        if steps.is_empty() {
            self.diag(
                at,
                DiagnosticKind::NoInteraction,
                Some(id),
                "episode without steps: skipped".into(),
            );
            return;
        }
        for o in &outcomes {
            if let OutcomeIndex::Literal(step) = &o.index {
                if !position.contains_key(step) {
                    self.diag(
                        at,
                        DiagnosticKind::UnknownSlotId,
                        Some(id),
                        format!("outcome for step `{step}`, which the episode lacks: ignored"),
                    );
                }
            }
        }
        let order = self.step_order(&steps);
        if order.len() < steps.len() {
            self.diag(
                at,
                DiagnosticKind::NoInteraction,
                Some(id),
                format!(
                    "{} steps unreachable from a first step (their previous step is missing, \
                     or they sit on a cycle): skipped",
                    steps.len() - order.len()
                ),
            );
        }
        // An outcome with a literal index belongs to that step; any other
        // is episodic and applies to every step.
        let episodic = |o: &&Outcome| !matches!(o.index, OutcomeIndex::Literal(_));
        // [quirk] the reference drops the outcomes' times here: `earliest`
        // is then the first outcome of the list.
        let timed = !reference;
        let mut rewards: Vec<f32> = order
            .iter()
            .filter_map(|&k| steps.get(k))
            .map(|(step, _, _)| {
                let list = outcomes
                    .iter()
                    .filter(episodic)
                    .chain(outcomes.iter().filter(|o| owned_by(o, &step.id)));
                self.reward_over(list, timed)
            })
            .collect();
        let originals = rewards.clone();
        self.opts.multistep_reward.apply(&mut rewards);
        for (n, &k) in order.iter().enumerate() {
            if repeated.contains(&k) {
                continue;
            }
            let Some((step, time, pass)) = steps.get(k) else {
                continue;
            };
            let mut context = Cow::Owned(step.context.clone());
            if !self.context(at, id, &mut context) {
                continue;
            }
            // The step's own outcomes first, then the episodic ones.
            let mine: Vec<Outcome> = outcomes
                .iter()
                .filter(|o| owned_by(o, &step.id))
                .chain(outcomes.iter().filter(episodic))
                .cloned()
                .collect();
            let skip_learn = step.deferred && !mine.iter().any(|o| o.action_taken);
            let ev = JoinedEvent {
                kind: Problem::Multistep,
                event_id: step.id.clone(),
                time: *time,
                client_time: whence.get(k).and_then(|w| w.0),
                learning_mode: self.config.learning_mode,
                episode_id: whence.get(k).map(|w| w.1.clone()),
                model_id: step.model_id.clone(),
                context,
                pass_probability: *pass,
                deferred: step.deferred,
                skip_learn,
                outcomes: mine,
                decision: Decision::Cb {
                    actions: step.actions.clone(),
                    probabilities: step.probabilities.clone(),
                },
                reward: rewards
                    .get(n)
                    .copied()
                    .unwrap_or(self.config.default_reward),
                // [quirk] the reference never computes it for steps.
                original_reward: match self.opts.compat {
                    Compat::Reference => 0.0,
                    Compat::Sane => originals
                        .get(n)
                        .copied()
                        .unwrap_or(self.config.default_reward),
                },
                offset: at.offset,
                message: at.index,
            };
            self.metrics.record(&ev);
            let mut ev = ev;
            sink.take(self, &mut ev);
            self.recycle(ev);
        }
    }

    /// Depth-first order from the roots; siblings by time, then id. Steps
    /// never reached are left out.
    fn step_order(&self, steps: &[(Step, TimeStamp, f32)]) -> Vec<usize> {
        let compat = self.opts.compat;
        let sort_key = |k: usize| {
            steps.get(k).map(|(s, t, _)| {
                let (secs, sub) = time::key(t);
                let sub = if compat == Compat::Reference { 0 } else { sub };
                ((secs, sub), s.id.clone())
            })
        };
        let index: HashMap<&str, usize> = steps
            .iter()
            .enumerate()
            .map(|(k, (s, _, _))| (s.id.as_str(), k))
            .collect();
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut roots = Vec::new();
        for (k, (s, _, _)) in steps.iter().enumerate() {
            let Some(previous) = s.previous.as_deref() else {
                roots.push(k);
                continue;
            };
            match index.get(previous) {
                // The reference files a step under its previous id even when
                // that is its own (never reached then); by default it is a
                // first step.
                Some(&parent) if parent != k || compat == Compat::Reference => {
                    children.entry(parent).or_default().push(k)
                }
                // A previous step missing from the batch: the reference never
                // reaches it; by default it starts a path of its own.
                None if compat == Compat::Reference => {}
                _ => roots.push(k),
            }
        }
        roots.sort_by_key(|&k| sort_key(k));
        for list in children.values_mut() {
            list.sort_by_key(|&k| sort_key(k));
        }
        let mut order = Vec::with_capacity(steps.len());
        let mut visited = vec![false; steps.len()];
        let mut stack: Vec<usize> = roots.into_iter().rev().collect();
        while let Some(k) = stack.pop() {
            match visited.get_mut(k) {
                Some(seen) if !*seen => *seen = true,
                _ => continue,
            }
            order.push(k);
            if let Some(list) = children.get(&k) {
                stack.extend(list.iter().rev());
            }
        }
        order
    }
}

/// Whether multistep outcome `o` is `step`'s own (its literal index).
fn owned_by(o: &Outcome, step: &str) -> bool {
    matches!(&o.index, OutcomeIndex::Literal(s) if s == step)
}
