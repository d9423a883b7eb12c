//! The skimming readers of `fb_format::skim` against the verifiers: on a
//! payload the verifiers accept they read what the accessors read; on
//! damaged ones they never panic; damage in what they do not read goes
//! unseen, damage in what they read stops them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_format::{MessageKind, SliceReader};
use fb_schema::{verified, Event, JoinedPayload, PayloadType};
use fb_tests::Rng;

/// On a payload the verifiers accept, event by event (each with an id and
/// a timestamp), `fb_format::skim::SkimmedEvents` yields every event, with what
/// the accessors read. (Where they refuse, it may still yield: it reads
/// only what an index keeps. That it never panics is what every
/// corruption here shows.)
fn skimmed_events_agree(buf: &[u8]) {
    let walked: Vec<_> = fb_format::skim::SkimmedEvents::new(buf).collect();
    let Ok(payload) = verified::<JoinedPayload>(buf) else {
        return;
    };
    let verified_events: Option<Vec<_>> = payload
        .events()
        .iter()
        .flatten()
        .map(|joined| {
            let event = joined.event()?.bytes();
            let stamp = *joined.timestamp()?;
            let meta = verified::<Event>(event).ok()?.meta()?;
            Some(fb_format::skim::Skimmed {
                enqueued: stamp,
                event,
                id: meta.id()?.as_bytes(),
                payload_type: meta.payload_type(),
                client_time: meta.client_time_utc().copied(),
            })
        })
        .collect();
    let Some(events) = verified_events else {
        return;
    };
    let walked: Vec<_> = walked
        .into_iter()
        .map(|e| e.expect("SkimmedEvents refused an event the verifiers accept"))
        .collect();
    assert_eq!(walked.len(), events.len());
    for (w, v) in walked.iter().zip(&events) {
        assert_eq!(w, v);
        assert_eq!(w.event.as_ptr(), v.event.as_ptr());
    }
}

/// Every REGULAR payload of the corpus, and a hundred corruptions of
/// each of the first few hundred: the skim agrees with the verifiers.
#[test]
fn skim_agrees_with_the_verifiers_on_the_corpus_and_its_corruptions() {
    let mut rng = Rng::new(0x5c1);
    let mut payloads = 0;
    for log in fb_tests::valid_logs() {
        let bytes = fb_tests::read(&log);
        for msg in SliceReader::new(&bytes) {
            let Ok(msg) = msg else { break };
            if msg.kind != MessageKind::Regular {
                continue;
            }
            skimmed_events_agree(msg.payload);
            payloads += 1;
            if payloads > 300 {
                continue;
            }
            for _ in 0..100 {
                skimmed_events_agree(&fb_tests::corrupt(msg.payload, &mut rng));
            }
        }
    }
    assert!(payloads > 20, "{payloads} payloads in the corpus");
}

/// A `JoinedPayload` of one event whose `app_id` is `app` (a marker the
/// test then damages in place).
fn one_event(app: &str) -> Vec<u8> {
    use fb_schema::{
        EventArgs, JoinedEventArgs, JoinedPayloadArgs, Metadata, MetadataArgs, TimeStamp,
    };
    let mut inner = flatbuffers::FlatBufferBuilder::new();
    let id = inner.create_string("decision-1");
    let app_id = inner.create_string(app);
    let client = TimeStamp::new(2024, 3, 4, 5, 6, 7, 80);
    let meta = Metadata::create(
        &mut inner,
        &MetadataArgs {
            id: Some(id),
            client_time_utc: Some(&client),
            app_id: Some(app_id),
            payload_type: PayloadType::CCB,
            ..Default::default()
        },
    );
    let event = Event::create(
        &mut inner,
        &EventArgs {
            meta: Some(meta),
            payload: None,
        },
    );
    inner.finish_minimal(event);
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let bytes = fbb.create_vector(inner.finished_data());
    let enqueued = TimeStamp::new(2024, 3, 4, 5, 6, 8, 0);
    let joined = fb_schema::JoinedEvent::create(
        &mut fbb,
        &JoinedEventArgs {
            event: Some(bytes),
            timestamp: Some(&enqueued),
        },
    );
    let list = fbb.create_vector(&[joined]);
    let root = JoinedPayload::create(&mut fbb, &JoinedPayloadArgs { events: Some(list) });
    fbb.finish_minimal(root);
    fbb.finished_data().to_vec()
}

#[test]
fn skimming_reads_what_an_index_keeps_and_nothing_else() {
    let good = one_event("app-marker");
    fn skim(buf: &[u8]) -> Option<fb_format::skim::Skimmed<'_>> {
        let all: Vec<_> = fb_format::skim::SkimmedEvents::new(buf).collect();
        assert_eq!(all.len(), 1);
        all[0]
    }
    let first = skim(&good).expect("a valid event is skimmed");
    assert_eq!(first.id, b"decision-1");
    assert_eq!(first.payload_type, PayloadType::CCB);
    assert_eq!(
        first.client_time,
        Some(fb_schema::TimeStamp::new(2024, 3, 4, 5, 6, 7, 80))
    );
    // The app id made invalid UTF-8: the verifiers refuse the event, the
    // skim (which does not read it) still gives the same parts.
    let mut bad = good.clone();
    let at = bad.windows(10).position(|w| w == b"app-marker").unwrap();
    bad[at] = 0xff;
    let verified_all = verified::<JoinedPayload>(&bad).ok().and_then(|p| {
        let joined = p.events()?.get(0);
        verified::<Event>(joined.event()?.bytes()).ok()
    });
    assert!(
        verified_all.is_none(),
        "the damage should be seen by the verifiers"
    );
    let again = skim(&bad).expect("the damage is in what the skim does not read");
    assert_eq!(
        (
            again.id,
            again.payload_type,
            again.client_time,
            again.enqueued
        ),
        (
            first.id,
            first.payload_type,
            first.client_time,
            first.enqueued
        )
    );
    // The id cut off from its bytes (its length past the buffer): not
    // skimmed, so that the reader asks the verifiers what is wrong.
    let mut cut = good.clone();
    let at = cut.windows(10).position(|w| w == b"decision-1").unwrap();
    cut[at - 4..at].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(skim(&cut), None);
}
