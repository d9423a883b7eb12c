//! Read → write → read on every valid corpus joined log: each message is
//! parsed with `fb_format` and re-written with `LogWriter` from its decoded
//! fields (events as typed `JoinedEventSpec`s, zstd payloads re-compressed;
//! HEADER and CHECKPOINT re-built; FILEMAGIC and EOF kept). The re-written
//! log must decode to the same fields and convert to the same DSJSON, byte
//! for byte, in both compat modes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::{Path, PathBuf};

use common::{decode, Decoded, Typed, Union};
use fb_format::{MessageKind, PayloadDecoder, SliceReader, TYPE_EOF};
use fb_join::{Compat, Options};
use fb_schema::{
    EventEncoding, LearningModeType, OutcomeEventArgs, ProblemType, RewardFunctionType, TimeStamp,
    UnionArg,
};
use fb_writer::{
    CaSpec, CbSpec, CheckpointConfig, DedupSpec, Encoding, JoinedEventSpec, LogWriter, MetaSpec,
    MultiSlotSpec, MultiStepSpec, PayloadSpec, SlotSpec,
};

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

/// `valid_joined_logs/*.fb|*.log` and `skip_learn/*/*`, sorted.
fn corpus() -> Vec<PathBuf> {
    let list = |dir: &Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("directory entry").path())
            .collect();
        files.sort();
        files
    };
    let mut files: Vec<PathBuf> = list(&data_dir().join("valid_joined_logs"))
        .into_iter()
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("fb" | "log")))
        .collect();
    for dir in list(&data_dir().join("skip_learn")) {
        files.extend(list(&dir).into_iter().filter(|p| p.is_file()));
    }
    files
}

/// One message, decoded into owned values.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    FileMagic {
        version: u32,
    },
    Header {
        properties: Option<Vec<(Option<String>, Option<String>)>>,
        join_time: Option<TimeStamp>,
    },
    Checkpoint {
        reward_function: RewardFunctionType,
        default_reward: f32,
        learning_mode: LearningModeType,
        problem_type: ProblemType,
        use_client_time: bool,
    },
    Regular(Vec<Decoded>),
    Eof {
        payload: Vec<u8>,
    },
    Unknown {
        type_id: u32,
        payload: Vec<u8>,
    },
}

/// Every message of `log`, decoded; panics on anything a valid log lacks.
fn parse(name: &str, log: &[u8]) -> Vec<Item> {
    let mut decoder = PayloadDecoder::default();
    let mut reader = SliceReader::new(log);
    let mut items = Vec::new();
    while let Some(msg) = reader
        .next_message()
        .unwrap_or_else(|e| panic!("{name}: framing: {e}"))
    {
        let at = format!("{name}: message {} at {}", msg.index, msg.offset);
        let item = match msg.kind {
            MessageKind::FileMagic => Item::FileMagic {
                version: msg.size_field,
            },
            MessageKind::Header => {
                let h = msg.file_header().unwrap_or_else(|e| panic!("{at}: {e}"));
                Item::Header {
                    properties: h.properties().map(|kvs| {
                        kvs.iter()
                            .map(|kv| {
                                (kv.key().map(str::to_string), kv.value().map(str::to_string))
                            })
                            .collect()
                    }),
                    join_time: h.join_time().copied(),
                }
            }
            MessageKind::Checkpoint => {
                let c = msg.checkpoint().unwrap_or_else(|e| panic!("{at}: {e}"));
                Item::Checkpoint {
                    reward_function: c.reward_function_type(),
                    default_reward: c.default_reward(),
                    learning_mode: c.learning_mode_config(),
                    problem_type: c.problem_type_config(),
                    use_client_time: c.use_client_time(),
                }
            }
            MessageKind::Regular => {
                let events = msg.events().unwrap_or_else(|e| panic!("{at}: {e}"));
                Item::Regular(
                    events
                        .map(|view| {
                            let view = view.unwrap_or_else(|e| panic!("{at}: {e}"));
                            decode(&view, &mut decoder, true)
                        })
                        .collect(),
                )
            }
            MessageKind::Eof => Item::Eof {
                payload: msg.payload.to_vec(),
            },
            MessageKind::Unknown(type_id) => Item::Unknown {
                type_id,
                payload: msg.payload.to_vec(),
            },
        };
        items.push(item);
    }
    items
}

fn union<N: Copy>(u: &Union<N>) -> UnionArg<'_, N> {
    match u {
        Union::None => UnionArg::None,
        Union::Numeric(n) => UnionArg::Numeric(*n),
        Union::Literal(s) => UnionArg::Literal(s),
    }
}

/// Pushes the event `d` describes: same metadata, timestamps, payload
/// fields and encoding.
fn push_event(w: &mut LogWriter<Vec<u8>>, d: &Decoded) {
    let slots: Vec<SlotSpec<'_>>;
    let values: Vec<&str>;
    let payload = match &d.payload {
        Typed::Cb {
            deferred,
            action_ids,
            context,
            probabilities,
            model_id,
            learning_mode,
        } => PayloadSpec::Cb(CbSpec {
            deferred_action: *deferred,
            action_ids: action_ids.as_deref(),
            context: context.as_deref(),
            probabilities: probabilities.as_deref(),
            model_id: model_id.as_deref(),
            learning_mode: *learning_mode,
        }),
        Typed::MultiSlot {
            slates,
            context,
            slots: slot_list,
            model_id,
            deferred,
            baseline,
            learning_mode,
        } => {
            slots = slot_list
                .iter()
                .flatten()
                .map(|s| SlotSpec {
                    action_ids: &s.action_ids,
                    probabilities: &s.probabilities,
                    id: s.id.as_deref(),
                })
                .collect();
            let spec = MultiSlotSpec {
                context: context.as_deref(),
                slots: slot_list.as_ref().map(|_| &slots[..]),
                model_id: model_id.as_deref(),
                deferred_action: *deferred,
                baseline_actions: baseline.as_deref(),
                learning_mode: *learning_mode,
            };
            if *slates {
                PayloadSpec::Slates(spec)
            } else {
                PayloadSpec::Ccb(spec)
            }
        }
        Typed::Ca {
            deferred,
            action,
            context,
            pdf_value,
            model_id,
            learning_mode,
        } => PayloadSpec::Ca(CaSpec {
            deferred_action: *deferred,
            action: *action,
            context: context.as_deref(),
            pdf_value: *pdf_value,
            model_id: model_id.as_deref(),
            learning_mode: *learning_mode,
        }),
        Typed::Outcome {
            value,
            index,
            action_taken,
        } => PayloadSpec::Outcome(OutcomeEventArgs {
            value: union(value),
            index: union(index),
            action_taken: *action_taken,
        }),
        Typed::Dedup { ids, values: texts } => {
            values = texts.iter().flatten().map(String::as_str).collect();
            PayloadSpec::Dedup(DedupSpec {
                ids: ids.as_deref().unwrap_or_default(),
                values: &values,
            })
        }
        Typed::Step {
            event_id,
            previous_id,
            action_ids,
            context,
            probabilities,
            model_id,
            deferred,
        } => PayloadSpec::MultiStep(MultiStepSpec {
            event_id: event_id.as_deref(),
            previous_id: previous_id.as_deref(),
            action_ids: action_ids.as_deref(),
            context: context.as_deref(),
            probabilities: probabilities.as_deref(),
            model_id: model_id.as_deref(),
            deferred_action: *deferred,
        }),
        Typed::Episode { episode_id } => PayloadSpec::Episode {
            episode_id: episode_id.as_deref(),
        },
        Typed::Bytes(bytes) => PayloadSpec::Raw {
            payload_type: d.payload_type,
            bytes,
        },
    };
    let encoding = match d.encoding {
        EventEncoding::Identity => Encoding::Identity,
        EventEncoding::Zstd => Encoding::Zstd,
        other => panic!("{}: encoding {other:?}", d.id),
    };
    let spec = JoinedEventSpec {
        meta: MetaSpec {
            id: Some(&d.id),
            client_time: d.client_time,
            app_id: d.app_id.as_deref(),
            payload_type: Some(d.payload_type),
            pass_probability: d.pass_probability,
            encoding,
        },
        enqueued: d.enqueued,
        payload,
    };
    w.push_event(&spec)
        .unwrap_or_else(|e| panic!("{}: writing: {e}", d.id));
}

/// The log `items` describe, written by `LogWriter`.
fn rewrite(name: &str, items: &[Item]) -> Vec<u8> {
    let mut w = LogWriter::new(Vec::new());
    for item in items {
        let written = match item {
            Item::FileMagic { version } => w.file_magic(*version),
            Item::Header {
                properties,
                join_time,
            } => {
                let props: Vec<(&str, &str)> = properties
                    .iter()
                    .flatten()
                    .map(|(k, v)| {
                        (
                            k.as_deref().expect("HEADER keys are present"),
                            v.as_deref().expect("HEADER values are present"),
                        )
                    })
                    .collect();
                let join_time = join_time.unwrap_or_else(|| panic!("{name}: HEADER without time"));
                w.header(&props, join_time)
            }
            Item::Checkpoint {
                reward_function,
                default_reward,
                learning_mode,
                problem_type,
                use_client_time,
            } => w.checkpoint(&CheckpointConfig {
                reward_function: *reward_function,
                default_reward: *default_reward,
                learning_mode: *learning_mode,
                problem_type: *problem_type,
                use_client_time: *use_client_time,
            }),
            Item::Regular(events) => {
                for d in events {
                    push_event(&mut w, d);
                }
                w.end_regular()
            }
            Item::Eof { payload } if payload.is_empty() => w.eof(),
            Item::Eof { payload } => w.message(TYPE_EOF, payload),
            Item::Unknown { type_id, payload } => w.message(*type_id, payload),
        };
        written.unwrap_or_else(|e| panic!("{name}: writing {item:?}: {e}"));
    }
    w.into_inner()
}

fn convert(log: &[u8], multistep: bool, compat: Compat) -> (Vec<u8>, String) {
    let mut out = Vec::new();
    let opts = Options::default().compat(compat).multistep(multistep);
    let summary = fb_join::convert(log, &mut out, opts).expect("writes to a Vec");
    // Offsets differ between the two files; what was reported must not.
    let facts = format!(
        "framing error: {:?}; diagnostics: {:?}; metrics: {:?}",
        summary.framing_error.is_some(),
        summary.diagnostics.counts(),
        summary.metrics
    );
    (out, facts)
}

#[test]
fn every_valid_corpus_log_survives_read_write_read() {
    let files = corpus();
    assert!(files.len() >= 38, "only {} corpus files", files.len());
    let mut zstd_events = 0;
    for path in &files {
        let name = path
            .strip_prefix(data_dir())
            .unwrap_or(path)
            .display()
            .to_string();
        let original = std::fs::read(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let items = parse(&name, &original);
        let rewritten = rewrite(&name, &items);

        // (a) The same messages with the same decoded fields (compared in
        // Debug form too, so that -0.0 and 0.0 differ).
        let again = parse(&format!("{name} (re-written)"), &rewritten);
        assert_eq!(items.len(), again.len(), "{name}: message count");
        for (k, (a, b)) in items.iter().zip(&again).enumerate() {
            assert_eq!(a, b, "{name}: message {k}");
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}: message {k}");
        }
        zstd_events += items
            .iter()
            .filter_map(|i| match i {
                Item::Regular(events) => Some(events),
                _ => None,
            })
            .flatten()
            .filter(|d| d.encoding == EventEncoding::Zstd)
            .count();

        // (b) Byte-identical DSJSON, and the same diagnostics and metrics.
        let multistep = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("multistep_"));
        for compat in [Compat::Sane, Compat::Reference] {
            let (want, want_facts) = convert(&original, multistep, compat);
            let (got, got_facts) = convert(&rewritten, multistep, compat);
            assert!(!want.is_empty(), "{name} {compat:?}: no DSJSON at all");
            assert!(
                want == got,
                "{name} {compat:?}: DSJSON differs\noriginal:\n{}\nre-written:\n{}",
                String::from_utf8_lossy(&want),
                String::from_utf8_lossy(&got)
            );
            assert_eq!(want_facts, got_facts, "{name} {compat:?}");
        }
    }
    // The corpus has compressed events: re-compression is exercised.
    assert!(zstd_events > 0, "no zstd event in the corpus");
}
