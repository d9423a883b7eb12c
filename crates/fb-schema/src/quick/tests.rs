//! The quick verifier held to the schema and to its own field list:
//! the list in `fields.rs` against `schema/*.fbs`, and each check against
//! the list (every field of its tables read, each as its type says).

use std::cell::RefCell;
use std::collections::BTreeSet;

use flatbuffers::FlatBufferBuilder;

use super::fields::{Field, MIRROR};
use super::QuickVerify;
use crate::*;

thread_local! {
    /// The fields the walk read since [`reads`] began, when it runs.
    static READ: RefCell<Option<Vec<Field>>> = const { RefCell::new(None) };
}

/// Called by the walk for every vtable slot it reads.
pub(super) fn record(f: Field) {
    READ.with(|r| {
        if let Some(read) = r.borrow_mut().as_mut() {
            read.push(f);
        }
    });
}

/// The fields `run` read, as `table.field`.
fn reads(run: impl FnOnce()) -> BTreeSet<String> {
    READ.with(|r| *r.borrow_mut() = Some(Vec::new()));
    run();
    let read = READ.with(|r| r.borrow_mut().take()).unwrap();
    read.iter()
        .map(|f| format!("{}.{}", f.table, f.name))
        .collect()
}

/// Every field of the described tables `tables`, as `table.field`.
fn described(tables: &[&str]) -> BTreeSet<String> {
    let out: BTreeSet<String> = MIRROR
        .iter()
        .flat_map(|t| t.iter())
        .filter(|f| tables.contains(&f.table))
        .map(|f| format!("{}.{}", f.table, f.name))
        .collect();
    assert!(!out.is_empty(), "{tables:?} are not described");
    out
}

/// Builds a root with every scalar written, defaults included.
fn build(
    make: impl FnOnce(
        &mut FlatBufferBuilder<'static>,
    ) -> flatbuffers::WIPOffset<flatbuffers::UnionWIPOffset>,
) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    fbb.force_defaults(true);
    let root = make(&mut fbb);
    fbb.finish_minimal(root);
    fbb.finished_data().to_vec()
}

fn full_event() -> Vec<u8> {
    build(|fbb| {
        let id = fbb.create_string("id-1");
        let app_id = fbb.create_string("app");
        let stamp = TimeStamp::new(2026, 11, 28, 12, 0, 0, 5);
        let meta = Metadata::create(
            fbb,
            &MetadataArgs {
                id: Some(id),
                client_time_utc: Some(&stamp),
                app_id: Some(app_id),
                payload_type: PayloadType::CCB,
                pass_probability: 0.5,
                encoding: EventEncoding::Zstd,
            },
        );
        let payload = fbb.create_vector(&[1u8, 2, 3]);
        Event::create(
            fbb,
            &EventArgs {
                meta: Some(meta),
                payload: Some(payload),
            },
        )
        .as_union_value()
    })
}

fn full_joined_payload() -> Vec<u8> {
    let event = full_event();
    build(|fbb| {
        let bytes = fbb.create_vector(&event);
        let stamp = TimeStamp::new(2026, 11, 28, 12, 0, 1, 0);
        let joined = JoinedEvent::create(
            fbb,
            &JoinedEventArgs {
                event: Some(bytes),
                timestamp: Some(&stamp),
            },
        );
        let events = fbb.create_vector(&[joined]);
        JoinedPayload::create(
            fbb,
            &JoinedPayloadArgs {
                events: Some(events),
            },
        )
        .as_union_value()
    })
}

fn full_cb() -> Vec<u8> {
    build(|fbb| {
        let action_ids = fbb.create_vector(&[3u64, 1]);
        let context = fbb.create_vector(b"{}");
        let probabilities = fbb.create_vector(&[0.75f32, 0.25]);
        let model_id = fbb.create_string("m");
        CbEvent::create(
            fbb,
            &CbEventArgs {
                deferred_action: true,
                action_ids: Some(action_ids),
                context: Some(context),
                probabilities: Some(probabilities),
                model_id: Some(model_id),
                learning_mode: LearningModeType::Apprentice,
            },
        )
        .as_union_value()
    })
}

fn full_multi_slot() -> Vec<u8> {
    build(|fbb| {
        let action_ids = fbb.create_vector(&[1u32, 0]);
        let probabilities = fbb.create_vector(&[0.5f32, 0.5]);
        let id = fbb.create_string("slot-0");
        let slot = SlotEvent::create(
            fbb,
            &SlotEventArgs {
                action_ids: Some(action_ids),
                probabilities: Some(probabilities),
                id: Some(id),
            },
        );
        let slots = fbb.create_vector(&[slot]);
        let context = fbb.create_vector(b"{}");
        let model_id = fbb.create_string("m");
        let baseline = fbb.create_vector(&[0i32]);
        MultiSlotEvent::create(
            fbb,
            &MultiSlotEventArgs {
                context: Some(context),
                slots: Some(slots),
                model_id: Some(model_id),
                deferred_action: true,
                baseline_actions: Some(baseline),
                learning_mode: LearningModeType::Apprentice,
            },
        )
        .as_union_value()
    })
}

fn full_ca() -> Vec<u8> {
    build(|fbb| {
        let context = fbb.create_vector(b"{}");
        let model_id = fbb.create_string("m");
        CaEvent::create(
            fbb,
            &CaEventArgs {
                deferred_action: true,
                action: 1.5,
                context: Some(context),
                pdf_value: 0.25,
                model_id: Some(model_id),
                learning_mode: LearningModeType::Apprentice,
            },
        )
        .as_union_value()
    })
}

fn full_multi_step() -> Vec<u8> {
    build(|fbb| {
        let event_id = fbb.create_string("e");
        let previous_id = fbb.create_string("p");
        let action_ids = fbb.create_vector(&[3u64, 1]);
        let context = fbb.create_vector(b"{}");
        let probabilities = fbb.create_vector(&[0.75f32, 0.25]);
        let model_id = fbb.create_string("m");
        MultiStepEvent::create(
            fbb,
            &MultiStepEventArgs {
                event_id: Some(event_id),
                previous_id: Some(previous_id),
                action_ids: Some(action_ids),
                context: Some(context),
                probabilities: Some(probabilities),
                model_id: Some(model_id),
                deferred_action: true,
            },
        )
        .as_union_value()
    })
}

fn full_dedup() -> Vec<u8> {
    build(|fbb| {
        let ids = fbb.create_vector(&[7u64]);
        let text = fbb.create_string("{\"a\":1}");
        let values = fbb.create_vector(&[text]);
        DedupInfo::create(
            fbb,
            &DedupInfoArgs {
                ids: Some(ids),
                values: Some(values),
            },
        )
        .as_union_value()
    })
}

fn full_outcome() -> Vec<u8> {
    build(|fbb| {
        OutcomeEvent::create(
            fbb,
            &OutcomeEventArgs {
                value: UnionArg::Numeric(1.5),
                index: UnionArg::Numeric(2),
                action_taken: true,
            },
        )
        .as_union_value()
    })
}

/// Each check, run on a buffer with every field of its tables set, reads
/// exactly the fields `fields.rs` describes for those tables (in debug
/// builds the walk also asserts each is read as its type says), and says
/// yes as the flatbuffers verifier does.
#[test]
fn each_check_reads_every_field_of_its_tables() {
    fn yes<'a, T>(buf: &'a [u8]) -> bool
    where
        T: flatbuffers::Follow<'a> + flatbuffers::Verifiable + QuickVerify + 'a,
    {
        assert!(
            verified::<T>(buf).is_ok(),
            "flatbuffers refuses the test buffer"
        );
        T::quick(buf)
    }
    type Case = (
        &'static str,
        fn() -> Vec<u8>,
        fn(&[u8]) -> bool,
        &'static [&'static str],
    );
    let cases: &[Case] = &[
        (
            "JoinedPayload",
            full_joined_payload,
            |b| yes::<JoinedPayload>(b),
            &["JoinedPayload", "JoinedEvent"],
        ),
        (
            "Event",
            full_event,
            |b| yes::<Event>(b),
            &["Event", "Metadata"],
        ),
        ("CbEvent", full_cb, |b| yes::<CbEvent>(b), &["CbEvent"]),
        (
            "MultiSlotEvent",
            full_multi_slot,
            |b| yes::<MultiSlotEvent>(b),
            &["MultiSlotEvent", "SlotEvent"],
        ),
        ("CaEvent", full_ca, |b| yes::<CaEvent>(b), &["CaEvent"]),
        (
            "MultiStepEvent",
            full_multi_step,
            |b| yes::<MultiStepEvent>(b),
            &["MultiStepEvent"],
        ),
        (
            "DedupInfo",
            full_dedup,
            |b| yes::<DedupInfo>(b),
            &["DedupInfo"],
        ),
        (
            "OutcomeEvent",
            full_outcome,
            |b| yes::<OutcomeEvent>(b),
            &["OutcomeEvent", "NumericOutcome", "NumericIndex"],
        ),
    ];
    let mut covered = BTreeSet::new();
    for (name, make, check, tables) in cases {
        let buf = make();
        let mut answer = false;
        let read = reads(|| answer = check(&buf));
        assert!(answer, "{name}: the quick check refuses a valid buffer");
        assert_eq!(
            read,
            described(tables),
            "{name}: fields read differ from fields.rs"
        );
        covered.extend(tables.iter().copied());
    }
    let all: BTreeSet<&str> = MIRROR.iter().map(|t| t[0].table).collect();
    assert_eq!(covered, all, "a described table no check reads");
}

/// The tables of `schema/*.fbs`: name → fields in order, each with its
/// type text and whether it is a union (which takes two vtable slots).
fn schema_tables() -> std::collections::BTreeMap<String, Vec<(String, String, bool)>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    let mut text = String::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            // Comments out, one statement per line.
            let line = line.split("//").next().unwrap_or("");
            text.push_str(line);
            text.push('\n');
        }
    }
    let unions: Vec<String> = text
        .split("union ")
        .skip(1)
        .map(|rest| rest.split_whitespace().next().unwrap().to_string())
        .collect();
    let mut tables = std::collections::BTreeMap::new();
    for rest in text.split("table ").skip(1) {
        let name = rest.split_whitespace().next().unwrap().to_string();
        let body = &rest[rest.find('{').unwrap() + 1..rest.find('}').unwrap()];
        let fields = body
            .split(';')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(|f| {
                let (field, ty) = f.split_once(':').unwrap();
                let ty = ty.split('=').next().unwrap().trim().to_string();
                let union = unions.contains(&ty);
                (field.trim().to_string(), ty, union)
            })
            .collect();
        tables.insert(name, fields);
    }
    tables
}

/// The table descriptions of `fields.rs` ([`MIRROR`]) must match the .fbs
/// files field for field, with the vtable offsets the generated code
/// uses, and cover every field of each table they describe.
#[test]
fn quick_mirror_matches_the_schema() {
    let tables = schema_tables();
    assert!(MIRROR.len() >= 12, "{} tables", MIRROR.len());
    for described in MIRROR {
        let table = described[0].table;
        let fields = tables
            .get(table)
            .unwrap_or_else(|| panic!("fields.rs describes `{table}`, which the schema lacks"));
        assert!(
            described.iter().all(|f| f.table == table),
            "fields.rs mixes tables under `{table}`"
        );
        let mine: Vec<(&str, &str, u16)> = described
            .iter()
            .map(|f| (f.name, f.ty.schema, f.voffset))
            .collect();
        // Vtable slots from the schema: 4 bytes of header, 2 per slot, a
        // union taking one for its type and one for its value.
        let mut slot = 0u16;
        let mut want = Vec::new();
        for (field, ty, union) in fields {
            if *union {
                slot += 1;
            }
            want.push((field.as_str(), ty.as_str(), 4 + 2 * slot));
            slot += 1;
        }
        assert_eq!(
            mine, want,
            "fields.rs's description of `{table}` differs from the schema: update it, then \
             the checks that read the table"
        );
    }
}
