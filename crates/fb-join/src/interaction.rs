//! Turning a verified payload into owned decision data, with the
//! acceptance rules of SEMANTICS.md §3.

use fb_format::Payload;

use crate::config::{LearningMode, Problem};
use crate::diag::Kind;
use crate::event::{Decision, EventKind, Slot};

/// An accepted decision, before outcomes and rewards.
#[derive(Debug, Clone)]
pub struct Interaction {
    pub kind: EventKind,
    pub decision: Decision,
    pub context: Vec<u8>,
    pub model_id: String,
    pub deferred: bool,
    pub learning_mode: LearningMode,
}

/// Why an interaction was not accepted.
pub type Rejection = (Kind, String);

/// The payload-type name matched against the configured problem type.
pub fn kind_of(payload: &Payload<'_>) -> Option<EventKind> {
    Some(match payload {
        Payload::Cb(_) => EventKind::Cb,
        Payload::Ccb(_) => EventKind::Ccb,
        Payload::Slates(_) => EventKind::Slates,
        Payload::Ca(_) => EventKind::Ca,
        _ => return None,
    })
}

/// True when an interaction of `kind` belongs to a loop of `problem`.
pub fn matches(kind: EventKind, problem: Problem) -> bool {
    matches!(
        (kind, problem),
        (EventKind::Cb, Problem::Cb)
            | (EventKind::Ccb, Problem::Ccb)
            | (EventKind::Slates, Problem::Slates)
            | (EventKind::Ca, Problem::Ca)
    )
}

fn missing(field: &str, table: &str) -> Rejection {
    (Kind::MissingField, format!("{table} has no `{field}`"))
}

fn model(id: Option<&str>) -> String {
    id.unwrap_or("N/A").to_string()
}

/// Copies the decision out of `payload`, checking required fields.
pub fn extract(payload: &Payload<'_>) -> Result<Interaction, Rejection> {
    match payload {
        Payload::Cb(cb) => {
            let context = cb.context().ok_or_else(|| missing("context", "CbEvent"))?;
            let actions = cb
                .action_ids()
                .ok_or_else(|| missing("action_ids", "CbEvent"))?;
            let probs = cb
                .probabilities()
                .ok_or_else(|| missing("probabilities", "CbEvent"))?;
            if actions.is_empty() {
                return Err((
                    Kind::ZeroActions,
                    "CbEvent has an empty `action_ids`".into(),
                ));
            }
            Ok(Interaction {
                kind: EventKind::Cb,
                decision: Decision::Cb {
                    actions: actions.iter().collect(),
                    probabilities: probs.iter().collect(),
                },
                context: context.bytes().to_vec(),
                model_id: model(cb.model_id()),
                deferred: cb.deferred_action(),
                learning_mode: LearningMode::from_wire(cb.learning_mode()),
            })
        }
        Payload::Ccb(ms) | Payload::Slates(ms) => {
            let kind = if matches!(payload, Payload::Ccb(_)) {
                EventKind::Ccb
            } else {
                EventKind::Slates
            };
            let context = ms
                .context()
                .ok_or_else(|| missing("context", "MultiSlotEvent"))?;
            let slots = ms
                .slots()
                .ok_or_else(|| missing("slots", "MultiSlotEvent"))?;
            let slots = slots
                .iter()
                .map(|s| Slot {
                    id: s.id().map(str::to_string),
                    actions: s
                        .action_ids()
                        .map(|a| a.iter().collect())
                        .unwrap_or_default(),
                    probabilities: s
                        .probabilities()
                        .map(|p| p.iter().collect())
                        .unwrap_or_default(),
                    outcomes: Vec::new(),
                    reward: 0.0,
                    original_reward: 0.0,
                })
                .collect();
            Ok(Interaction {
                kind,
                decision: Decision::MultiSlot {
                    slots,
                    baseline: ms
                        .baseline_actions()
                        .map(|b| b.iter().collect())
                        .unwrap_or_default(),
                },
                context: context.bytes().to_vec(),
                model_id: model(ms.model_id()),
                deferred: ms.deferred_action(),
                learning_mode: LearningMode::from_wire(ms.learning_mode()),
            })
        }
        Payload::Ca(ca) => {
            let context = ca.context().ok_or_else(|| missing("context", "CaEvent"))?;
            Ok(Interaction {
                kind: EventKind::Ca,
                decision: Decision::Ca {
                    action: ca.action(),
                    pdf_value: ca.pdf_value(),
                },
                context: context.bytes().to_vec(),
                model_id: model(ca.model_id()),
                deferred: ca.deferred_action(),
                learning_mode: LearningMode::from_wire(ca.learning_mode()),
            })
        }
        other => Err((
            Kind::ProblemTypeMismatch,
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
            Kind::ProblemTypeMismatch,
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
            Kind::ZeroActions,
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
