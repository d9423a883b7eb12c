//! Owned, comparable views of decoded events, and the same built from what
//! was written (specs, generator records).
#![allow(dead_code)]

use fb_format::{EventView, Payload, PayloadDecoder};
use fb_schema::{
    EventEncoding, IndexValue, LearningModeType, OutcomeValue, PayloadType, TimeStamp, UnionArg,
};
use fb_writer::{Encoding, JoinedEventSpec, PayloadSpec};

/// An outcome value or index, owned.
#[derive(Debug, Clone, PartialEq)]
pub enum Union<N> {
    None,
    Numeric(N),
    Literal(String),
}

impl<N: Copy> From<UnionArg<'_, N>> for Union<N> {
    fn from(arg: UnionArg<'_, N>) -> Self {
        match arg {
            UnionArg::None => Self::None,
            UnionArg::Numeric(n) => Self::Numeric(n),
            UnionArg::Literal(s) => Self::Literal(s.to_string()),
        }
    }
}

/// One slot, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    pub action_ids: Vec<u32>,
    pub probabilities: Vec<f32>,
    pub id: Option<String>,
}

/// A typed payload, owned. Vectors that may be absent are `Option`s.
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    Cb {
        deferred: bool,
        action_ids: Option<Vec<u64>>,
        context: Option<Vec<u8>>,
        probabilities: Option<Vec<f32>>,
        model_id: Option<String>,
        learning_mode: LearningModeType,
    },
    MultiSlot {
        slates: bool,
        context: Option<Vec<u8>>,
        slots: Option<Vec<Slot>>,
        model_id: Option<String>,
        deferred: bool,
        baseline: Option<Vec<i32>>,
        learning_mode: LearningModeType,
    },
    Ca {
        deferred: bool,
        action: f32,
        context: Option<Vec<u8>>,
        pdf_value: f32,
        model_id: Option<String>,
        learning_mode: LearningModeType,
    },
    Outcome {
        value: Union<f32>,
        index: Union<i32>,
        action_taken: bool,
    },
    Dedup {
        ids: Option<Vec<u64>>,
        values: Option<Vec<String>>,
    },
    Step {
        event_id: Option<String>,
        previous_id: Option<String>,
        action_ids: Option<Vec<u64>>,
        context: Option<Vec<u8>>,
        probabilities: Option<Vec<f32>>,
        model_id: Option<String>,
        deferred: bool,
    },
    Episode {
        episode_id: Option<String>,
    },
    /// Not decoded: the (decompressed) payload bytes.
    Bytes(Vec<u8>),
}

/// One event, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub id: String,
    pub enqueued: TimeStamp,
    pub client_time: Option<TimeStamp>,
    pub app_id: Option<String>,
    pub payload_type: PayloadType,
    pub pass_probability: f32,
    pub encoding: EventEncoding,
    pub payload: Typed,
}

/// Decodes `view`; `typed` = false keeps the raw (decompressed) bytes.
pub fn decode(view: &EventView<'_>, decoder: &mut PayloadDecoder, typed: bool) -> Decoded {
    let payload = if typed {
        match decoder.payload(view).expect("payload decodes") {
            Payload::Cb(cb) => Typed::Cb {
                deferred: cb.deferred_action(),
                action_ids: cb.action_ids().map(|v| v.iter().collect()),
                context: cb.context().map(|v| v.bytes().to_vec()),
                probabilities: cb.probabilities().map(|v| v.iter().collect()),
                model_id: cb.model_id().map(str::to_string),
                learning_mode: cb.learning_mode(),
            },
            Payload::Ccb(ms) | Payload::Slates(ms) => Typed::MultiSlot {
                slates: view.payload_type() == PayloadType::Slates,
                context: ms.context().map(|v| v.bytes().to_vec()),
                slots: ms.slots().map(|slots| {
                    slots
                        .iter()
                        .map(|s| Slot {
                            action_ids: s
                                .action_ids()
                                .map(|v| v.iter().collect())
                                .unwrap_or_default(),
                            probabilities: s
                                .probabilities()
                                .map(|v| v.iter().collect())
                                .unwrap_or_default(),
                            id: s.id().map(str::to_string),
                        })
                        .collect()
                }),
                model_id: ms.model_id().map(str::to_string),
                deferred: ms.deferred_action(),
                baseline: ms.baseline_actions().map(|v| v.iter().collect()),
                learning_mode: ms.learning_mode(),
            },
            Payload::Ca(ca) => Typed::Ca {
                deferred: ca.deferred_action(),
                action: ca.action(),
                context: ca.context().map(|v| v.bytes().to_vec()),
                pdf_value: ca.pdf_value(),
                model_id: ca.model_id().map(str::to_string),
                learning_mode: ca.learning_mode(),
            },
            Payload::Outcome(o) => Typed::Outcome {
                value: match o.value() {
                    OutcomeValue::None => Union::None,
                    OutcomeValue::Numeric(v) => Union::Numeric(v),
                    OutcomeValue::Literal(s) => Union::Literal(s.to_string()),
                    OutcomeValue::Unknown(t) => panic!("unknown value tag {t}"),
                },
                index: match o.index() {
                    IndexValue::None => Union::None,
                    IndexValue::Numeric(v) => Union::Numeric(v),
                    IndexValue::Literal(s) => Union::Literal(s.to_string()),
                    IndexValue::Unknown(t) => panic!("unknown index tag {t}"),
                },
                action_taken: o.action_taken(),
            },
            Payload::Dedup(d) => Typed::Dedup {
                ids: d.ids().map(|v| v.iter().collect()),
                values: d.values().map(|v| v.iter().map(str::to_string).collect()),
            },
            Payload::MultiStep(s) => Typed::Step {
                event_id: s.event_id().map(str::to_string),
                previous_id: s.previous_id().map(str::to_string),
                action_ids: s.action_ids().map(|v| v.iter().collect()),
                context: s.context().map(|v| v.bytes().to_vec()),
                probabilities: s.probabilities().map(|v| v.iter().collect()),
                model_id: s.model_id().map(str::to_string),
                deferred: s.deferred_action(),
            },
            Payload::Episode(e) => Typed::Episode {
                episode_id: e.episode_id().map(str::to_string),
            },
            Payload::Unknown(t) => panic!("unknown payload type {t:?}"),
            other => panic!("a payload this test does not know: {}", other.table_name()),
        }
    } else {
        Typed::Bytes(decoder.bytes(view).expect("payload bytes").to_vec())
    };
    Decoded {
        id: view.id.to_string(),
        enqueued: view.enqueued,
        client_time: view.meta.client_time_utc().copied(),
        app_id: view.meta.app_id().map(str::to_string),
        payload_type: view.payload_type(),
        pass_probability: view.meta.pass_probability(),
        encoding: view.meta.encoding(),
        payload,
    }
}

/// What decoding the event written from `spec` must give.
pub fn expected(spec: &JoinedEventSpec<'_>) -> Decoded {
    let owned = |s: Option<&str>| s.map(str::to_string);
    let payload = match &spec.payload {
        PayloadSpec::Cb(cb) => Typed::Cb {
            deferred: cb.deferred_action,
            action_ids: cb.action_ids.map(<[u64]>::to_vec),
            context: cb.context.map(<[u8]>::to_vec),
            probabilities: cb.probabilities.map(<[f32]>::to_vec),
            model_id: owned(cb.model_id),
            learning_mode: cb.learning_mode,
        },
        PayloadSpec::Ccb(ms) | PayloadSpec::Slates(ms) => Typed::MultiSlot {
            slates: matches!(spec.payload, PayloadSpec::Slates(_)),
            context: ms.context.map(<[u8]>::to_vec),
            slots: ms.slots.map(|slots| {
                slots
                    .iter()
                    .map(|s| Slot {
                        action_ids: s.action_ids.to_vec(),
                        probabilities: s.probabilities.to_vec(),
                        id: owned(s.id),
                    })
                    .collect()
            }),
            model_id: owned(ms.model_id),
            deferred: ms.deferred_action,
            baseline: ms.baseline_actions.map(<[i32]>::to_vec),
            learning_mode: ms.learning_mode,
        },
        PayloadSpec::Ca(ca) => Typed::Ca {
            deferred: ca.deferred_action,
            action: ca.action,
            context: ca.context.map(<[u8]>::to_vec),
            pdf_value: ca.pdf_value,
            model_id: owned(ca.model_id),
            learning_mode: ca.learning_mode,
        },
        PayloadSpec::Outcome(o) => Typed::Outcome {
            value: o.value.into(),
            index: o.index.into(),
            action_taken: o.action_taken,
        },
        PayloadSpec::Dedup(d) => Typed::Dedup {
            ids: Some(d.ids.to_vec()),
            values: Some(d.values.iter().map(|s| s.to_string()).collect()),
        },
        PayloadSpec::MultiStep(s) => Typed::Step {
            event_id: owned(s.event_id),
            previous_id: owned(s.previous_id),
            action_ids: s.action_ids.map(<[u64]>::to_vec),
            context: s.context.map(<[u8]>::to_vec),
            probabilities: s.probabilities.map(<[f32]>::to_vec),
            model_id: owned(s.model_id),
            deferred: s.deferred_action,
        },
        PayloadSpec::Episode { episode_id } => Typed::Episode {
            episode_id: owned(*episode_id),
        },
        PayloadSpec::Raw { bytes, .. } => Typed::Bytes(bytes.to_vec()),
    };
    Decoded {
        id: spec.meta.id.expect("spec has an id").to_string(),
        enqueued: spec.enqueued,
        client_time: spec.meta.client_time,
        app_id: owned(spec.meta.app_id),
        payload_type: spec
            .meta
            .payload_type
            .unwrap_or_else(|| spec.payload.payload_type()),
        pass_probability: spec.meta.pass_probability,
        encoding: match spec.meta.encoding {
            Encoding::Identity => EventEncoding::Identity,
            Encoding::Zstd | Encoding::ClaimsZstd => EventEncoding::Zstd,
        },
        payload,
    }
}
