//! One id's group of events (SEMANTICS.md §3): the interaction accepted,
//! its outcomes attached, the rewards computed.

use fb_format::{EventView, Position};
use fb_schema::PayloadType;

use super::{borrow_context, copy_context, Joiner, Sink};
use crate::config::LearningMode;
use crate::diag::DiagnosticKind;
use crate::event::{Decision, JoinedEvent, Outcome, OutcomeIndex};
use crate::interaction::{extract_cb, extract_into, extract_multi_slot, kind_of, matches};
use crate::{Caches, Problem};

impl Joiner {
    pub(super) fn group<'m, S: Sink>(
        &mut self,
        at: Position,
        id: &str,
        events: &[(u32, EventView<'m>)],
        sink: &mut S,
    ) {
        let problem = self.config.problem_type;
        let mut ev: JoinedEvent<'m> = self.blank();
        let mut accepted: Option<&EventView<'m>> = None;
        let mut outcomes = 0;
        let mut invalid = false;
        for (_, view) in events {
            match view.payload_type() {
                PayloadType::Outcome => {
                    if accepted.is_none() {
                        self.diag(
                            at,
                            DiagnosticKind::OutcomeWithoutInteraction,
                            Some(id),
                            "outcome before (or without) its interaction: dropped".into(),
                        );
                        continue;
                    }
                    if outcomes == ev.outcomes.len() {
                        let blank = self.spare_outcomes.pop().unwrap_or_else(Outcome::blank);
                        ev.outcomes.push(blank);
                    }
                    let Some(slot) = ev.outcomes.get_mut(outcomes) else {
                        continue;
                    };
                    if self.outcome_into(at, view, slot) {
                        outcomes += 1;
                        self.read_whole.read_one();
                    } else {
                        invalid = true;
                    }
                }
                PayloadType::CB
                | PayloadType::CCB
                | PayloadType::Slates
                | PayloadType::CA
                | PayloadType::MultiStep => {
                    if accepted.is_some() {
                        self.diag(
                            at,
                            DiagnosticKind::DuplicateInteraction,
                            Some(id),
                            "second interaction with this id: ignored".into(),
                        );
                        continue;
                    }
                    if self.accept(at, view, problem, &mut ev) {
                        accepted = Some(view);
                    }
                }
                other => self.diag(
                    at,
                    DiagnosticKind::UnknownPayloadType,
                    Some(id),
                    format!("payload type {} is not known: ignored", other.0),
                ),
            }
        }
        self.park_outcomes(&mut ev.outcomes, outcomes);
        let Some(view) = accepted else {
            self.diag(
                at,
                DiagnosticKind::NoInteraction,
                Some(id),
                "no interaction was accepted for this id: skipped".into(),
            );
            self.recycle(ev);
            return;
        };
        if invalid {
            self.diag(
                at,
                DiagnosticKind::InvalidPayload,
                Some(id),
                "an outcome could not be decoded: event skipped".into(),
            );
            self.recycle(ev);
            return;
        }
        if !self.context(at, id, &mut ev.context) {
            self.recycle(ev);
            return;
        }
        // Its payload decoded and its context checked (what counts is
        // left to `ReadWhole::end`).
        self.read_whole.read_one();
        ev.time = self.time_of(at, view);
        ev.client_time = view.client_time();
        ev.learning_mode = self.config.learning_mode;
        ev.pass_probability = view.pass_probability();
        ev.event_id.clear();
        ev.event_id.push_str(id);
        ev.offset = at.offset;
        ev.message = at.index;
        if self.finish(at, id, &mut ev) {
            self.metrics.record(&ev);
            sink.take(self, &mut ev);
        }
        self.recycle(ev);
    }

    /// Acceptance checks 1–4 of §3 for one interaction, copying it into
    /// `ev` when it passes them.
    fn accept<'m>(
        &mut self,
        at: Position,
        view: &EventView<'m>,
        problem: Option<Problem>,
        ev: &mut JoinedEvent<'m>,
    ) -> bool {
        let declared = match view.payload_type() {
            PayloadType::CB => Problem::Cb,
            PayloadType::CCB => Problem::Ccb,
            PayloadType::Slates => Problem::Slates,
            PayloadType::CA => Problem::Ca,
            _ => Problem::Multistep,
        };
        if !matches(declared, problem) {
            let hint = if declared == Problem::Multistep {
                " (join with multistep on)"
            } else {
                ""
            };
            self.diag(
                at,
                DiagnosticKind::ProblemTypeMismatch,
                Some(view.id),
                format!(
                    "{} interaction in {} {} loop: skipped{hint}",
                    declared.name().to_uppercase(),
                    if problem.is_none() { "an" } else { "a" },
                    problem.map_or("UNKNOWN", Problem::schema_name)
                ),
            );
            return false;
        }
        // A payload stored uncompressed is read in place and its context
        // borrowed; a decompressed one lives in the decoder until the next
        // payload, so its context is copied out.
        let invalid = |err: fb_format::Error| (DiagnosticKind::InvalidPayload, err.to_string());
        // CCB and Slates read while verified, where the fast verifier
        // takes them (the accessors would walk every vtable again), but
        // with caches off; the decoder's verifier is chosen likewise.
        let slots = &mut self.spare_slots;
        let fast = match view.payload_type() {
            PayloadType::CCB | PayloadType::Slates
                if !view.is_compressed() && self.opts.caches == Caches::On =>
            {
                extract_multi_slot(view.raw_payload(), declared, ev, slots)
            }
            _ => None,
        };
        let spare = &mut self.contexts;
        let extracted = match (fast, view.payload_type()) {
            (Some(extracted), _) => extracted.map(|(mode, ctx)| {
                borrow_context(&mut ev.context, ctx, spare);
                mode
            }),
            (None, PayloadType::CB) => {
                match self.decoder.with_cb_in_place(view, |cb| extract_cb(cb, ev)) {
                    Some(extracted) => extracted
                        .map_err(invalid)
                        .and_then(|extracted| extracted)
                        .map(|(mode, ctx)| {
                            borrow_context(&mut ev.context, ctx, spare);
                            mode
                        }),
                    None => match self.decoder.cb(view) {
                        Ok(cb) => extract_cb(&cb, ev).map(|(mode, ctx)| {
                            copy_context(&mut ev.context, ctx, spare);
                            mode
                        }),
                        Err(err) => Err(invalid(err)),
                    },
                }
            }
            _ => match self.decoder.payload_in_place(view) {
                Some(payload) => payload
                    .map_err(invalid)
                    .and_then(|payload| {
                        debug_assert_eq!(kind_of(&payload), Some(declared));
                        extract_into(&payload, ev, slots)
                    })
                    .map(|(mode, ctx)| {
                        borrow_context(&mut ev.context, ctx, spare);
                        mode
                    }),
                None => match self.decoder.payload(view) {
                    Ok(payload) => {
                        debug_assert_eq!(kind_of(&payload), Some(declared));
                        extract_into(&payload, ev, slots).map(|(mode, ctx)| {
                            copy_context(&mut ev.context, ctx, spare);
                            mode
                        })
                    }
                    Err(err) => Err(invalid(err)),
                },
            },
        };
        let learning_mode = match extracted {
            Ok(mode) => mode,
            Err((kind, detail)) => {
                self.diag(
                    at,
                    kind,
                    Some(view.id),
                    format!("{detail}: interaction skipped"),
                );
                return false;
            }
        };
        if learning_mode != self.config.learning_mode {
            self.diag(
                at,
                DiagnosticKind::LearningModeMismatch,
                Some(view.id),
                format!(
                    "interaction logged in {:?} mode, loop configured for {:?}: skipped",
                    learning_mode, self.config.learning_mode
                ),
            );
            return false;
        }
        true
    }

    /// Rewards per problem type (§4) and the skip-learn flag (§5); false
    /// when the event must be skipped.
    fn finish(&mut self, at: Position, id: &str, ev: &mut JoinedEvent<'_>) -> bool {
        let original = self.reward(ev.outcomes.iter());
        let apprentice = self.config.learning_mode == LearningMode::Apprentice;
        let mut reward = original;
        let outcomes = &ev.outcomes;
        match &mut ev.decision {
            Decision::Cb { actions, .. } => {
                if apprentice {
                    reward = if actions.first() == Some(&1) {
                        1.0
                    } else {
                        0.0
                    };
                }
            }
            Decision::Ca { .. } => {
                if apprentice {
                    self.diag(
                        at,
                        DiagnosticKind::ApprenticeUnsupported,
                        Some(id),
                        "apprentice mode is not defined for CA: default reward used".into(),
                    );
                    reward = self.config.default_reward;
                }
            }
            Decision::MultiSlot { .. } if ev.kind == Problem::Slates => {
                if apprentice {
                    self.diag(
                        at,
                        DiagnosticKind::ApprenticeUnsupported,
                        Some(id),
                        "apprentice mode is not defined for slates: default reward used".into(),
                    );
                    reward = self.config.default_reward;
                }
            }
            Decision::MultiSlot { slots, baseline } => {
                for (k, o) in outcomes.iter().enumerate() {
                    match &o.index {
                        OutcomeIndex::Numeric(i) => {
                            match usize::try_from(*i).ok().and_then(|i| slots.get_mut(i)) {
                                Some(slot) => slot.outcomes.push(k),
                                None => self.diag(
                                    at,
                                    DiagnosticKind::SlotIndexOutOfRange,
                                    Some(id),
                                    format!(
                                        "outcome index {i} but the decision has {} slots: ignored",
                                        slots.len()
                                    ),
                                ),
                            }
                        }
                        OutcomeIndex::Literal(s) => {
                            match slots.iter_mut().find(|slot| slot.id.as_deref() == Some(s)) {
                                Some(slot) => slot.outcomes.push(k),
                                None => self.diag(
                                    at,
                                    DiagnosticKind::UnknownSlotId,
                                    Some(id),
                                    format!(
                                        "outcome for slot id `{s}`, which no slot carries: ignored"
                                    ),
                                ),
                            }
                        }
                        OutcomeIndex::None if !o.action_taken => self.diag(
                            at,
                            DiagnosticKind::OutcomeWithoutIndex,
                            Some(id),
                            "CCB outcome without slot index: ignored".into(),
                        ),
                        OutcomeIndex::None => {}
                    }
                }
                if apprentice && baseline.len() != slots.len() {
                    self.diag(
                        at,
                        DiagnosticKind::BaselineMismatch,
                        Some(id),
                        format!(
                            "apprentice CCB with {} baseline actions for {} slots: skipped",
                            baseline.len(),
                            slots.len()
                        ),
                    );
                    return false;
                }
                for (i, slot) in slots.iter_mut().enumerate() {
                    slot.original_reward =
                        self.reward(slot.outcomes.iter().filter_map(|&k| outcomes.get(k)));
                    slot.reward = if apprentice {
                        let chosen = slot.actions.first().map(|a| i64::from(*a));
                        let base = baseline.get(i).map(|b| i64::from(*b));
                        if chosen.is_some() && chosen == base {
                            1.0
                        } else {
                            0.0
                        }
                    } else {
                        slot.original_reward
                    };
                }
            }
        }
        ev.skip_learn = ev.deferred && !ev.outcomes.iter().any(|o| o.action_taken);
        ev.reward = reward;
        ev.original_reward = original;
        true
    }
}
