//! Turning a verified payload into owned decision data, with the
//! acceptance rules of SEMANTICS.md §3.

use fb_format::Payload;
use fb_schema::CbParts;

use crate::config::LearningMode;
use crate::diag::DiagnosticKind;
use crate::event::{Decision, JoinedEvent, SlotDecision};
use crate::Problem;

/// Why an interaction was not accepted.
pub type Rejection = (DiagnosticKind, String);

/// The payload-type name matched against the configured problem type.
pub fn kind_of(payload: &Payload<'_>) -> Option<Problem> {
    Some(match payload {
        Payload::Cb(_) => Problem::Cb,
        Payload::Ccb(_) => Problem::Ccb,
        Payload::Slates(_) => Problem::Slates,
        Payload::Ca(_) => Problem::Ca,
        _ => return None,
    })
}

/// True when an interaction of `kind` belongs to a loop of `problem`
/// (multistep steps are joined apart, never here).
pub fn matches(kind: Problem, problem: Option<Problem>) -> bool {
    kind != Problem::Multistep && problem == Some(kind)
}

fn missing(field: &str, table: &str) -> Rejection {
    (
        DiagnosticKind::MissingField,
        format!("{table} has no `{field}`"),
    )
}

fn model(id: Option<&str>) -> String {
    id.unwrap_or("N/A").to_string()
}

/// Replaces the text in `buf`, keeping its allocation.
fn set_text(buf: &mut String, text: &str) {
    buf.clear();
    buf.push_str(text);
}

/// Replaces the items in `buf` with the little-endian words of `N` bytes
/// in `bytes` (a flatbuffers vector's data), keeping its allocation. An
/// iterator of known length: `extend` sizes once and writes in a loop the
/// compiler can widen, where items of unknown count were pushed one by one.
fn set_words<T, const N: usize>(buf: &mut Vec<T>, bytes: &[u8], read: fn([u8; N]) -> T) {
    buf.clear();
    buf.extend(
        bytes
            .chunks_exact(N)
            .map(|w| read(w.first_chunk::<N>().copied().unwrap_or([0; N]))),
    );
}

/// What an accepted interaction leaves to the caller: the learning mode
/// it was logged in, and its context, which the caller borrows or copies
/// depending on where the payload lives.
pub type Extracted<'p> = (LearningMode, &'p [u8]);

/// [`extract_into`] for a CB payload read by the fast verifier.
pub fn extract_cb<'p>(
    cb: &CbParts<'p>,
    ev: &mut JoinedEvent<'_>,
) -> Result<Extracted<'p>, Rejection> {
    let context = cb.context.ok_or_else(|| missing("context", "CbEvent"))?;
    let actions = cb
        .action_ids
        .ok_or_else(|| missing("action_ids", "CbEvent"))?;
    let probs = cb
        .probabilities
        .ok_or_else(|| missing("probabilities", "CbEvent"))?;
    if actions.is_empty() {
        return Err((
            DiagnosticKind::ZeroActions,
            "CbEvent has an empty `action_ids`".into(),
        ));
    }
    ev.kind = Problem::Cb;
    if !matches!(ev.decision, Decision::Cb { .. }) {
        ev.decision = Decision::Cb {
            actions: Vec::new(),
            probabilities: Vec::new(),
        };
    }
    if let Decision::Cb {
        actions: ids,
        probabilities: ps,
    } = &mut ev.decision
    {
        set_words(ids, actions, u64::from_le_bytes);
        set_words(ps, probs, f32::from_le_bytes);
    }
    set_text(&mut ev.model_id, cb.model_id.unwrap_or("N/A"));
    ev.deferred = cb.deferred_action;
    Ok((LearningMode::from_wire(cb.learning_mode), context))
}

/// Refills `slot` with a logged slot's id, action ids and probabilities
/// (little-endian words), keeping its buffers; no outcomes, no reward yet.
fn fill_slot(slot: &mut SlotDecision, id: Option<&str>, actions: &[u8], probabilities: &[u8]) {
    match (id, &mut slot.id) {
        (Some(text), Some(kept)) => set_text(kept, text),
        (text, kept) => *kept = text.map(str::to_string),
    }
    set_words(&mut slot.actions, actions, u32::from_le_bytes);
    set_words(&mut slot.probabilities, probabilities, f32::from_le_bytes);
    slot.outcomes.clear();
    slot.reward = 0.0;
    slot.original_reward = 0.0;
}

/// [`extract_into`] for a CCB or Slates payload stored uncompressed,
/// `bytes`, read while the fast verifier checks it; `None` where that
/// declines (then read it through [`extract_into`]).
pub fn extract_multi_slot<'p>(
    bytes: &'p [u8],
    kind: Problem,
    ev: &mut JoinedEvent<'_>,
    spare: &mut Vec<SlotDecision>,
) -> Option<Result<Extracted<'p>, Rejection>> {
    if !matches!(ev.decision, Decision::MultiSlot { .. }) {
        ev.decision = Decision::MultiSlot {
            slots: Vec::new(),
            baseline: Vec::new(),
        };
    }
    let Decision::MultiSlot { slots, baseline } = &mut ev.decision else {
        return None;
    };
    let mut count = 0;
    let parts = fb_schema::multi_slot_parts(bytes, |i, s| {
        if slots.len() <= i {
            slots.push(spare.pop().unwrap_or_default());
        }
        if let Some(slot) = slots.get_mut(i) {
            fill_slot(
                slot,
                s.id,
                s.action_ids.unwrap_or_default(),
                s.probabilities.unwrap_or_default(),
            );
        }
        count = i + 1;
    })?;
    crate::pool::park(slots, count, spare, |_| {});
    // The checks `extract_into` makes before it reads the slots; what was
    // read is dropped with the event.
    let Some(context) = parts.context else {
        return Some(Err(missing("context", "MultiSlotEvent")));
    };
    if !parts.has_slots {
        return Some(Err(missing("slots", "MultiSlotEvent")));
    }
    set_words(
        baseline,
        parts.baseline_actions.unwrap_or_default(),
        i32::from_le_bytes,
    );
    ev.kind = kind;
    set_text(&mut ev.model_id, parts.model_id.unwrap_or("N/A"));
    ev.deferred = parts.deferred_action;
    Some(Ok((LearningMode::from_wire(parts.learning_mode), context)))
}

/// Copies the decision out of `payload` into `ev` (kind, decision, model
/// id, deferred), reusing its buffers, and checks the required fields.
pub fn extract_into<'p>(
    payload: &Payload<'p>,
    ev: &mut JoinedEvent<'_>,
    spare: &mut Vec<SlotDecision>,
) -> Result<Extracted<'p>, Rejection> {
    match payload {
        Payload::Cb(cb) => extract_cb(&CbParts::from(*cb), ev),
        Payload::Ccb(ms) | Payload::Slates(ms) => {
            let kind = if matches!(payload, Payload::Ccb(_)) {
                Problem::Ccb
            } else {
                Problem::Slates
            };
            let context = ms
                .context()
                .ok_or_else(|| missing("context", "MultiSlotEvent"))?;
            let logged = ms
                .slots()
                .ok_or_else(|| missing("slots", "MultiSlotEvent"))?;
            if !matches!(ev.decision, Decision::MultiSlot { .. }) {
                ev.decision = Decision::MultiSlot {
                    slots: Vec::new(),
                    baseline: Vec::new(),
                };
            }
            if let Decision::MultiSlot { slots, baseline } = &mut ev.decision {
                crate::pool::park(slots, logged.len(), spare, |_| {});
                while slots.len() < logged.len() {
                    slots.push(spare.pop().unwrap_or_default());
                }
                for (slot, s) in slots.iter_mut().zip(logged.iter()) {
                    fill_slot(
                        slot,
                        s.id(),
                        s.action_ids().map_or(&[], |a| a.bytes()),
                        s.probabilities().map_or(&[], |p| p.bytes()),
                    );
                }
                set_words(
                    baseline,
                    ms.baseline_actions().map_or(&[], |b| b.bytes()),
                    i32::from_le_bytes,
                );
            }
            ev.kind = kind;
            set_text(&mut ev.model_id, ms.model_id().unwrap_or("N/A"));
            ev.deferred = ms.deferred_action();
            Ok((LearningMode::from_wire(ms.learning_mode()), context.bytes()))
        }
        Payload::Ca(ca) => {
            let context = ca.context().ok_or_else(|| missing("context", "CaEvent"))?;
            ev.kind = Problem::Ca;
            ev.decision = Decision::Ca {
                action: ca.action(),
                pdf_value: ca.pdf_value(),
            };
            set_text(&mut ev.model_id, ca.model_id().unwrap_or("N/A"));
            ev.deferred = ca.deferred_action();
            Ok((LearningMode::from_wire(ca.learning_mode()), context.bytes()))
        }
        other => Err((
            DiagnosticKind::ProblemTypeMismatch,
            format!("{} is not an interaction", other.table_name()),
        )),
    }
}

/// A multistep step, before ordering and rewards.
#[derive(Debug, Clone)]
pub struct Step {
    pub id: String,
    pub previous: Option<String>,
    pub actions: Vec<u64>,
    pub probabilities: Vec<f32>,
    pub context: Vec<u8>,
    pub model_id: String,
    pub deferred: bool,
}

/// Copies a multistep step out of `payload`.
pub fn extract_step(payload: &Payload<'_>) -> Result<Step, Rejection> {
    let Payload::MultiStep(ms) = payload else {
        return Err((
            DiagnosticKind::ProblemTypeMismatch,
            format!("{} is not a multistep step", payload.table_name()),
        ));
    };
    let id = ms
        .event_id()
        .ok_or_else(|| missing("event_id", "MultiStepEvent"))?;
    let context = ms
        .context()
        .ok_or_else(|| missing("context", "MultiStepEvent"))?;
    let actions = ms
        .action_ids()
        .ok_or_else(|| missing("action_ids", "MultiStepEvent"))?;
    let probs = ms
        .probabilities()
        .ok_or_else(|| missing("probabilities", "MultiStepEvent"))?;
    if actions.is_empty() {
        return Err((
            DiagnosticKind::ZeroActions,
            "MultiStepEvent has an empty `action_ids`".into(),
        ));
    }
    Ok(Step {
        id: id.to_string(),
        previous: ms
            .previous_id()
            .filter(|p| !p.is_empty())
            .map(str::to_string),
        actions: actions.iter().collect(),
        probabilities: probs.iter().collect(),
        context: context.bytes().to_vec(),
        model_id: model(ms.model_id()),
        deferred: ms.deferred_action(),
    })
}
