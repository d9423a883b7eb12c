//! fb-format's speed caches on and off (`Caches`): the same messages,
//! events and payloads (or the same errors) from every file of the corpus,
//! and counters that show each cache served with them on and none did
//! with them off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{read, Owned};
use fb_format::{Caches, EventView, MessageKind, PayloadDecoder, SliceReader};
use fb_schema::PayloadType;

/// Every file of the corpus with its bytes: the valid logs and the broken
/// ones (whose damage must read alike either way).
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut names = common::valid_logs();
    let dir = common::data_dir().join("invalid_joined_logs");
    let mut invalid: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name();
            format!("invalid_joined_logs/{}", name.to_string_lossy())
        })
        .collect();
    invalid.sort();
    names.extend(invalid);
    names
        .into_iter()
        .map(|name| {
            let bytes = read(&name);
            (name, bytes)
        })
        .collect()
}

/// The messages `data` frames with `caches`, then how reading ended, and
/// where the lines asked for ahead of the reader ended.
fn framed(data: &[u8], caches: Caches) -> (Vec<Owned>, Option<String>, usize) {
    let mut reader = SliceReader::new(data).with_caches(caches);
    let mut messages = Vec::new();
    loop {
        match reader.next_message() {
            Ok(Some(m)) => messages.push(m.into()),
            Ok(None) => return (messages, None, reader.prefetched_to()),
            Err(e) => return (messages, Some(e.to_string()), reader.prefetched_to()),
        }
    }
}

/// What a decoder made with `caches` reads of each event of `messages`,
/// as text: the view, and its payload read every way the joiner reads
/// one (typed, as CB parts, as outcome parts, in place).
fn decoded(messages: &[Owned], decoder: &mut PayloadDecoder, caches: Caches) -> (Vec<String>, u64) {
    let mut out = Vec::new();
    let mut events_in_full = 0;
    for m in messages.iter().filter(|m| m.kind == MessageKind::Regular) {
        let msg = m.message();
        let mut events = match msg.events_with(caches) {
            Ok(events) => events,
            Err(e) => {
                out.push(format!("message {}: {e}", m.index));
                continue;
            }
        };
        for view in &mut events {
            match view {
                Ok(view) => out.extend(read_view(&view, decoder)),
                Err(e) => out.push(format!("event: {e}")),
            }
        }
        events_in_full += events.verified_in_full();
    }
    (out, events_in_full)
}

fn read_view(view: &EventView<'_>, decoder: &mut PayloadDecoder) -> Vec<String> {
    let text = |r: Result<String, fb_format::Error>| r.unwrap_or_else(|e| e.to_string());
    let mut out = vec![format!(
        "{} {:?} {:?} {:?}",
        view.id,
        view.payload_type(),
        view.client_time(),
        view.pass_probability()
    )];
    out.push(text(decoder.bytes(view).map(|b| format!("{b:?}"))));
    out.push(text(decoder.payload(view).map(|p| format!("{p:?}"))));
    if let Some(p) = decoder.payload_in_place(view) {
        out.push(text(p.map(|p| format!("{p:?}"))));
    }
    match view.payload_type() {
        PayloadType::CB => {
            out.push(text(decoder.cb(view).map(|cb| format!("{cb:?}"))));
            if let Some(cb) = decoder.with_cb_in_place(view, |cb| format!("{cb:?}")) {
                out.push(text(cb));
            }
        }
        PayloadType::Outcome => {
            out.push(text(decoder.outcome(view).map(|o| {
                format!("{:?} {:?} {}", o.value, o.index, o.action_taken)
            })))
        }
        _ => {}
    }
    out
}

#[test]
fn caches_off_read_what_caches_on_read() {
    let corpus = corpus();
    assert!(corpus.len() > 40, "{} files", corpus.len());
    let mut on = PayloadDecoder::with_caches(fb_format::DEFAULT_MAX_PAYLOAD as usize, Caches::On);
    let mut off = PayloadDecoder::with_caches(fb_format::DEFAULT_MAX_PAYLOAD as usize, Caches::Off);
    let (mut events_on, mut events_off, mut lines_asked) = (0, 0, 0);
    // Twice over: frames and outcomes met in the first round come again.
    for round in 0..2 {
        for (name, data) in &corpus {
            let (messages, end, asked) = framed(data, Caches::On);
            let (messages_off, end_off, asked_off) = framed(data, Caches::Off);
            assert_eq!(messages, messages_off, "{name}: messages");
            assert_eq!(end, end_off, "{name}: how reading ended");
            assert_eq!(asked_off, 0, "{name}: lines asked for with caches off");
            lines_asked += asked;
            let (read_on, full_on) = decoded(&messages, &mut on, Caches::On);
            let (read_off, full_off) = decoded(&messages, &mut off, Caches::Off);
            assert_eq!(read_on, read_off, "{name}, round {round}");
            events_on += full_on;
            events_off += full_off;
        }
    }
    assert!(lines_asked > 0, "the prefetcher asked for nothing");
    // On: the caches served, and the quick verifier read every event of
    // the valid logs' and most of the rest.
    assert!(on.frames_served_again() > 0, "{on:?}");
    assert!(on.outcome_parts_served_again() > 0, "{on:?}");
    assert!(events_on < events_off && on.verified_in_full() < off.verified_in_full());
    // Off: nothing served again, and every buffer read in full.
    assert_eq!(off.frames_served_again(), 0, "{off:?}");
    assert_eq!(off.outcome_parts_served_again(), 0, "{off:?}");
    assert!(events_off > 1000, "{events_off} events read in full");
}
