//! The differential test of the fast verifier (`fb_schema::QuickVerify`,
//! `src/quick/`) against the flatbuffers verifier: on every buffer of the
//! corpus, and on thousands of seeded corruptions of them, both must give
//! the same answer, and the parts the fast one returns must be what the
//! accessors read. A "yes" where flatbuffers says "no" would let corrupt
//! input be read unchecked (the contract the SAFETY comments of
//! `src/quick/` and `verified_quick` rest on). The `decode` fuzz target
//! (`fuzz/harness/format.rs`, `quick_agrees`) checks the same on what it
//! grows. fb-format (a dev-dependency) only finds the buffers in the logs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeMap;

use fb_format::{MessageKind, PayloadDecoder, SliceReader};
use fb_schema::{
    verified, CaEvent, CbEvent, DedupInfo, EpisodeEvent, Event, JoinedPayload, MultiSlotEvent,
    MultiStepEvent, OutcomeEvent, PayloadType, QuickVerify,
};
use fb_tests::Rng;
use flatbuffers::{Follow, Verifiable};

/// Every buffer of a log that the hot path verifies, with its table name.
fn buffers(log: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let mut reader = SliceReader::new(log);
    let mut decoder = PayloadDecoder::default();
    while let Ok(Some(msg)) = reader.next_message() {
        if msg.kind != MessageKind::Regular {
            continue;
        }
        out.push(("JoinedPayload", msg.payload.to_vec()));
        if let Ok(payload) = msg.joined_payload() {
            for joined in payload.events().iter().flatten() {
                if let Some(event) = joined.event() {
                    out.push(("Event", event.bytes().to_vec()));
                }
            }
        }
        let Ok(events) = msg.events() else { continue };
        for view in events.flatten() {
            let table = match view.payload_type() {
                PayloadType::CB => "CbEvent",
                PayloadType::CCB | PayloadType::Slates => "MultiSlotEvent",
                PayloadType::CA => "CaEvent",
                PayloadType::Outcome => "OutcomeEvent",
                PayloadType::DedupInfo => "DedupInfo",
                PayloadType::MultiStep => "MultiStepEvent",
                PayloadType::Episode => "EpisodeEvent",
                _ => continue,
            };
            if let Ok(bytes) = decoder.bytes(&view) {
                out.push((table, bytes.to_vec()));
            }
        }
    }
    out
}

fn agree_as<'a, T>(buf: &'a [u8]) -> (bool, bool)
where
    T: Follow<'a> + Verifiable + QuickVerify + 'a,
{
    (T::quick(buf), verified::<T>(buf).is_ok())
}

/// Where the fast verifier also returns what it read, that must be what
/// the accessors read from the buffer flatbuffers verified.
fn parts_agree(table: &str, buf: &[u8]) {
    // Debug text, so that NaNs read from corrupt bytes compare equal.
    let same = |a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{table}");
    };
    match table {
        "Event" => {
            let Some(p) = fb_schema::event_parts(buf) else {
                return;
            };
            let e = verified::<Event>(buf).expect("quick said yes");
            same(&p.payload, &e.payload().map(|v| v.bytes()));
            same(&p.meta.is_some(), &e.meta().is_some());
            let slow = fb_schema::EventParts::from(e);
            same(
                &(p.id, p.payload_type, p.encoding, p.pass_probability),
                &(
                    slow.id,
                    slow.payload_type,
                    slow.encoding,
                    slow.pass_probability,
                ),
            );
            same(
                &(p.client_time, p.payload),
                &(slow.client_time, slow.payload),
            );
            if let Some(m) = e.meta() {
                same(&p.id, &m.id());
                same(&p.payload_type, &m.payload_type());
                same(&p.encoding, &m.encoding());
                same(&p.pass_probability, &m.pass_probability());
                same(&p.client_time, &m.client_time_utc().map(|t| &t.0));
                same(&p.meta.and_then(|m| m.app_id()), &m.app_id());
            }
        }
        "CbEvent" => {
            let Some(p) = fb_schema::cb_parts(buf) else {
                return;
            };
            let cb = verified::<CbEvent>(buf).expect("quick said yes");
            same(&p.deferred_action, &cb.deferred_action());
            same(&p.action_ids, &cb.action_ids().map(|v| v.bytes()));
            same(&p.context, &cb.context().map(|v| v.bytes()));
            same(&p.probabilities, &cb.probabilities().map(|v| v.bytes()));
            same(&p.model_id, &cb.model_id());
            same(&p.learning_mode, &cb.learning_mode());
            // The conversion the slow path uses reads the same.
            same(&p, &fb_schema::CbParts::from(cb));
        }
        "OutcomeEvent" => {
            let Some(p) = fb_schema::outcome_parts(buf) else {
                return;
            };
            let o = verified::<OutcomeEvent>(buf).expect("quick said yes");
            same(&p.value, &o.value());
            same(&p.index, &o.index());
            same(&p.action_taken, &o.action_taken());
            same(&p, &fb_schema::OutcomeParts::from(o));
        }
        "MultiSlotEvent" => {
            let mut slots = Vec::new();
            let Some(p) = fb_schema::multi_slot_parts(buf, |i, s| slots.push((i, s))) else {
                return;
            };
            let ms = verified::<MultiSlotEvent>(buf).expect("quick said yes");
            same(&p.context, &ms.context().map(|v| v.bytes()));
            same(&p.has_slots, &ms.slots().is_some());
            same(&p.model_id, &ms.model_id());
            same(&p.deferred_action, &ms.deferred_action());
            same(
                &p.baseline_actions,
                &ms.baseline_actions().map(|v| v.bytes()),
            );
            same(&p.learning_mode, &ms.learning_mode());
            let logged: Vec<_> = ms.slots().iter().flatten().collect();
            same(&slots.len(), &logged.len());
            for ((i, s), (k, l)) in slots.iter().zip(logged.iter().enumerate()) {
                same(i, &k);
                same(&s.id, &l.id());
                same(&s.action_ids, &l.action_ids().map(|v| v.bytes()));
                same(&s.probabilities, &l.probabilities().map(|v| v.bytes()));
            }
        }
        _ => {}
    }
}

/// (quick, flatbuffers) for `buf` as `table`.
fn answers(table: &str, buf: &[u8]) -> (bool, bool) {
    parts_agree(table, buf);
    match table {
        "JoinedPayload" => agree_as::<JoinedPayload>(buf),
        "Event" => agree_as::<Event>(buf),
        "CbEvent" => agree_as::<CbEvent>(buf),
        "MultiSlotEvent" => agree_as::<MultiSlotEvent>(buf),
        "CaEvent" => agree_as::<CaEvent>(buf),
        "OutcomeEvent" => agree_as::<OutcomeEvent>(buf),
        "DedupInfo" => agree_as::<DedupInfo>(buf),
        "MultiStepEvent" => agree_as::<MultiStepEvent>(buf),
        "EpisodeEvent" => agree_as::<EpisodeEvent>(buf),
        other => panic!("no table {other}"),
    }
}

#[test]
fn quick_and_flatbuffers_agree_on_the_corpus_and_its_corruptions() {
    // table -> (valid buffers, corruptions accepted, corruptions refused)
    let mut seen: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut rng = Rng::new(0x5eed);
    for log in fb_tests::valid_logs() {
        let bytes = fb_tests::read(&log);
        for (table, buf) in buffers(&bytes) {
            let (quick, full) = answers(table, &buf);
            assert_eq!(quick, full, "{log}: {table} as logged");
            let entry = seen.entry(table).or_default();
            entry.0 += 1;
            // Cap the work per table: the corpus repeats shapes.
            if entry.0 > 300 {
                continue;
            }
            for _ in 0..100 {
                let bad = fb_tests::corrupt(&buf, &mut rng);
                let (quick, full) = answers(table, &bad);
                assert_eq!(quick, full, "{log}: corrupted {table} {bad:?}");
                let entry = seen.entry(table).or_default();
                if full {
                    entry.1 += 1;
                } else {
                    entry.2 += 1;
                }
            }
        }
    }
    for table in [
        "JoinedPayload",
        "Event",
        "CbEvent",
        "MultiSlotEvent",
        "CaEvent",
        "OutcomeEvent",
        "DedupInfo",
        "MultiStepEvent",
    ] {
        let (valid, accepted, refused) = seen.get(table).copied().unwrap_or_default();
        assert!(valid > 0, "the corpus has no {table}");
        assert!(
            accepted > 0 && refused > 0,
            "{table}: corruptions should meet both answers ({accepted} accepted, {refused} refused)"
        );
    }
}

/// A `JoinedPayload` of `events` elements that all point at one
/// `JoinedEvent` whose `event` vector holds `bytes` bytes.
fn shared_events(events: usize, bytes: usize) -> Vec<u8> {
    use fb_schema::{JoinedEventArgs, JoinedPayloadArgs, TimeStamp};
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let data = fbb.create_vector(&vec![7u8; bytes]);
    let ts = TimeStamp::new(2024, 1, 1, 0, 0, 0, 0);
    let one = fb_schema::JoinedEvent::create(
        &mut fbb,
        &JoinedEventArgs {
            event: Some(data),
            timestamp: Some(&ts),
        },
    );
    let list = fbb.create_vector(&vec![one; events]);
    let root = JoinedPayload::create(&mut fbb, &JoinedPayloadArgs { events: Some(list) });
    fbb.finish_minimal(root);
    fbb.finished_data().to_vec()
}

#[test]
fn quick_says_no_where_flatbuffers_counts_past_its_limits() {
    // Shared offsets make flatbuffers count the 1 MiB vector once per
    // element: 4096 times is past its 2 GiB apparent-size limit.
    let bomb = shared_events(4096, 1 << 20);
    assert!(verified::<JoinedPayload>(&bomb).is_err());
    assert!(!JoinedPayload::quick(&bomb));
    // The same shape well within the limits: both say yes, whether the
    // fast verifier counts (many events times a large buffer) or not.
    for (events, bytes) in [(2, 100), (64, 1 << 20), (600, 1 << 20), (300, 100)] {
        let fine = shared_events(events, bytes);
        assert!(
            verified::<JoinedPayload>(&fine).is_ok(),
            "{events} x {bytes}"
        );
        assert!(JoinedPayload::quick(&fine), "{events} x {bytes}");
    }
}

/// A `MultiSlotEvent` of `slots` elements that all point at one
/// `SlotEvent` whose `action_ids` holds `bytes` bytes.
fn shared_slots(slots: usize, bytes: usize) -> Vec<u8> {
    use fb_schema::{MultiSlotEventArgs, SlotEventArgs};
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let ids = fbb.create_vector(&vec![7u32; bytes / 4]);
    let one = fb_schema::SlotEvent::create(
        &mut fbb,
        &SlotEventArgs {
            action_ids: Some(ids),
            ..SlotEventArgs::default()
        },
    );
    let list = fbb.create_vector(&vec![one; slots]);
    let context = fbb.create_vector(b"{}");
    let root = MultiSlotEvent::create(
        &mut fbb,
        &MultiSlotEventArgs {
            context: Some(context),
            slots: Some(list),
            ..MultiSlotEventArgs::default()
        },
    );
    fbb.finish_minimal(root);
    fbb.finished_data().to_vec()
}

#[test]
fn slots_are_counted_where_flatbuffers_could_pass_its_limits() {
    // 4096 slots sharing a 1 MiB vector: past the apparent-size limit.
    let bomb = shared_slots(4096, 1 << 20);
    assert!(verified::<MultiSlotEvent>(&bomb).is_err());
    assert!(!MultiSlotEvent::quick(&bomb));
    assert!(fb_schema::multi_slot_parts(&bomb, |_, _| {}).is_none());
    // Within the limits both say yes, whether the buffer is walked
    // counting (many slots times a large buffer) or not, and every slot
    // is handed over.
    for (slots, bytes) in [(2, 100), (64, 1 << 20), (600, 1 << 20), (3000, 100)] {
        let fine = shared_slots(slots, bytes);
        assert!(
            verified::<MultiSlotEvent>(&fine).is_ok(),
            "{slots} x {bytes}"
        );
        let mut seen = 0;
        let parts = fb_schema::multi_slot_parts(&fine, |i, s| {
            assert_eq!(i, seen);
            assert_eq!(s.action_ids.map(<[u8]>::len), Some(bytes / 4 * 4));
            seen += 1;
        });
        assert!(parts.is_some_and(|p| p.has_slots), "{slots} x {bytes}");
        assert_eq!(seen, slots, "{slots} x {bytes}");
    }
}

#[test]
fn fixed_shape_tables_above_64_mib_go_to_flatbuffers() {
    use fb_schema::CbEventArgs;
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let context = fbb.create_vector(&vec![b' '; (64 << 20) + 1]);
    let cb = CbEvent::create(
        &mut fbb,
        &CbEventArgs {
            context: Some(context),
            ..CbEventArgs::default()
        },
    );
    fbb.finish_minimal(cb);
    let buf = fbb.finished_data();
    assert!(fb_schema::cb_parts(buf).is_none());
    assert!(!CbEvent::quick(buf));
    // Still read, the slow way.
    let cb = fb_schema::verified_quick::<CbEvent>(buf).expect("a valid buffer");
    assert_eq!(cb.context().map(|c| c.len()), Some((64 << 20) + 1));
}
