//! Fuzz harnesses over `fb-format`, shared by the fuzz targets in
//! `fuzz/fuzz_targets/` and the regression test that replays
//! `tests/data/fuzz/{framing,decode}/` (`crates/fb-format/tests/recover.rs`
//! includes this file). A panic is a finding: either in the code under
//! test, or an invariant below that does not hold.

use std::io::{Read, Write};

use fb_format::raw::RawStreamReader;
use fb_format::recover::{Recovered, RecoveringReader};
use fb_format::{
    Error, Framer, Message, MessageKind, PayloadDecoder, SliceReader, Step, StreamReader,
    DEFAULT_MAX_PAYLOAD,
};

/// A message, owned, as the harness compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owned {
    kind: MessageKind,
    offset: u64,
    index: u64,
    size_field: u32,
    payload: Vec<u8>,
    len: usize,
}

impl From<Message<'_>> for Owned {
    fn from(m: Message<'_>) -> Self {
        Self {
            kind: m.kind,
            offset: m.offset,
            index: m.index,
            size_field: m.size_field,
            payload: m.payload.to_vec(),
            len: m.len,
        }
    }
}

/// Messages, then the error that ended reading (as text and offset).
type Outcome = (Vec<Owned>, Option<(u64, String)>);

fn error(e: &Error) -> Option<(u64, String)> {
    Some((e.offset(), e.to_string()))
}

/// Target (a), the framing core. The first two bytes choose a split point
/// and options; the rest is the log.
///
/// The [`Framer`] over the whole input, the `Framer` fed the input in two
/// parts split at an arbitrary point, [`SliceReader`] and [`StreamReader`]
/// (small reads) must agree; the raw-stream reader must not panic; the
/// [`RecoveringReader`] must account for every byte exactly once, and
/// agree with the plain reader on an intact log.
pub fn framing(data: &[u8]) {
    let [a, b, input @ ..] = data else {
        return;
    };
    let control = u16::from_le_bytes([*a, *b]);
    let limit = if control & 1 == 0 {
        DEFAULT_MAX_PAYLOAD
    } else {
        64
    };
    let split = usize::from(control >> 1) % (input.len() + 1);

    let whole = framer_run(input, input.len(), limit);
    let parts = framer_run(input, split, limit);
    assert_eq!(whole, parts, "split at {split} changed the messages");

    let mut slice = SliceReader::with_framer(input, Framer::with_max_payload(limit));
    let mut got = Vec::new();
    let slice_outcome = loop {
        match slice.next_message() {
            Ok(Some(m)) => got.push(Owned::from(m)),
            Ok(None) => break (got, None),
            Err(e) => break (got, error(&e)),
        }
    };
    assert_eq!(whole, slice_outcome, "SliceReader differs from the Framer");

    let step = usize::from(*a % 13) + 1;
    let dribble = Dribble { data: input, step };
    let mut stream = StreamReader::with_framer(dribble, Framer::with_max_payload(limit));
    let mut got = Vec::new();
    let stream_outcome = loop {
        match stream.next_message() {
            Ok(Some(m)) => got.push(Owned::from(m)),
            Ok(None) => break (got, None),
            Err(e) => break (got, error(&e)),
        }
    };
    assert_eq!(whole, stream_outcome, "StreamReader ({step}) differs");

    for msg in RawStreamReader::new(input).flatten() {
        if let Ok(events) = msg.events() {
            for event in events {
                let _ = write!(std::io::sink(), "{event:?}");
            }
        }
    }

    recovery(input, limit, &whole);
}

/// Runs the [`Framer`] over `input` given in two parts: `input[..split]`
/// (not the end), then the whole input.
fn framer_run(input: &[u8], split: usize, limit: u32) -> Outcome {
    let mut framer = Framer::with_max_payload(limit);
    let mut got = Vec::new();
    let (mut start, mut end) = (0usize, split);
    loop {
        let at_end = end == input.len();
        let unread = input.get(start..end).expect("start <= end <= len");
        match framer.next(unread, at_end) {
            Ok(Step::Message(m)) => {
                assert!(m.len <= unread.len(), "message longer than the input");
                start += m.len;
                got.push(Owned::from(m));
            }
            Ok(Step::NeedMore(n)) => {
                assert!(!at_end, "NeedMore at the end of the input");
                assert!(
                    n > unread.len(),
                    "NeedMore({n}) with {} unread",
                    unread.len()
                );
                end = input.len();
            }
            Ok(Step::End) => return (got, None),
            Err(e) => {
                assert!(framer.is_done(), "the framer goes on after an error");
                return (got, error(&e));
            }
        }
    }
}

/// Checks a salvaged message: every position is kept, withheld or lost;
/// what is kept is a valid message whose events all verify, and no larger
/// than the input allows.
pub fn salvaged(input: &[u8], s: &fb_format::salvage::Salvaged) {
    let r = &s.report;
    let good = r.kept + r.withheld;
    assert!(r.kept <= good);
    assert_eq!(
        good + r.lost_count(),
        r.listed,
        "positions unaccounted for: {r:?}"
    );
    let _ = write!(std::io::sink(), "{r}");
    let msg = s.message();
    let events = msg.events().expect("a salvaged payload verifies");
    assert_eq!(events.total() as u64, r.kept);
    for event in events {
        event.expect("a salvaged event verifies");
    }
    // Nothing grows beyond the input: the kept events' bytes are copies
    // of its own, with a few dozen bytes of tables each.
    assert!(s.payload.len() as u64 <= input.len() as u64 + 64 * (r.kept + 1));
}

/// Checks the [`RecoveringReader`]: items cover `input` exactly, in order;
/// messages are what the input holds at their offset; on an intact log the
/// messages are the plain reader's.
fn recovery(input: &[u8], limit: u32, plain: &Outcome) {
    let mut next = 0u64;
    let mut messages = Vec::new();
    let mut skipped = 0usize;
    let mut yielded = 0u64;
    for item in RecoveringReader::with_max_payload(input, limit) {
        match item {
            Recovered::Message(m) => {
                assert_eq!(m.offset, next, "gap or overlap before message {m:?}");
                let at = usize::try_from(m.offset).expect("offset fits");
                let bytes = input.get(at..at + m.len).expect("message within input");
                if m.kind != MessageKind::FileMagic && m.kind != MessageKind::Eof {
                    assert_eq!(bytes.get(8..8 + m.payload.len()), Some(m.payload));
                }
                assert!(!matches!(m.kind, MessageKind::Unknown(_)));
                assert_eq!(m.index, yielded);
                yielded += 1;
                next += m.len as u64;
                messages.push(Owned::from(m));
            }
            Recovered::Salvaged(s) => {
                // Its damaged bytes are the skipped range that follows.
                assert_eq!(s.report.offset, next, "salvage out of place {:?}", s.report);
                assert_eq!(s.report.index, yielded);
                yielded += 1;
                salvaged(input, &s);
            }
            Recovered::Skipped(s) => {
                assert_eq!(s.start, next, "gap or overlap before {s:?}");
                assert!(s.end > s.start, "empty skipped range {s:?}");
                let _ = write!(std::io::sink(), "{s}");
                next = s.end;
                skipped += 1;
            }
        }
    }
    assert_eq!(next, input.len() as u64, "recovery did not reach the end");

    // An intact log: read without error, to its last byte, every message of
    // a known type with a payload that verifies.
    let (plain_messages, plain_error) = plain;
    let read_to_end =
        plain_messages.last().map_or(0, |m| m.offset + m.len as u64) == input.len() as u64;
    let intact = plain_error.is_none()
        && read_to_end
        && plain_messages.iter().all(|m| {
            let msg = Message {
                kind: m.kind,
                offset: m.offset,
                index: m.index,
                size_field: m.size_field,
                payload: &m.payload,
                len: m.len,
            };
            match m.kind {
                MessageKind::Header => msg.file_header().is_ok(),
                MessageKind::Checkpoint => msg.checkpoint().is_ok(),
                // Recovery also holds every event of a REGULAR message
                // to verify (else it salvages around the bad ones).
                MessageKind::Regular => msg
                    .events()
                    .is_ok_and(|mut events| events.all(|e| e.is_ok())),
                MessageKind::FileMagic | MessageKind::Eof => true,
                MessageKind::Unknown(_) => false,
            }
        });
    if intact {
        assert_eq!(skipped, 0, "an intact log lost bytes");
        assert_eq!(messages, *plain_messages, "an intact log read differently");
    }
}

/// A reader that returns at most `step` bytes per call.
struct Dribble<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        buf.get_mut(..n)
            .expect("n <= buf.len()")
            .copy_from_slice(head);
        self.data = rest;
        Ok(n)
    }
}

/// Target `salvage`: the first byte chooses where the payload (the rest)
/// is cut (its low 7 bits, in 128ths of its length; 127 keeps it whole)
/// and whether the cut is the input's end (bit 7) or the payload is
/// corrupt in place. The salvage must account for every listed event,
/// rebuild a valid message of verifying events no larger than the input
/// allows, and on a payload whose every event verifies keep them all,
/// byte for byte.
pub fn salvage(data: &[u8]) {
    let Some((&control, payload)) = data.split_first() else {
        return;
    };
    let keep = usize::from(control & 0x7f);
    let len = if keep == 127 {
        payload.len()
    } else {
        payload.len() * keep / 128
    };
    let present = &payload[..len];
    let cut = control & 0x80 != 0;
    let Some(s) = fb_format::salvage::salvage(present, 0, 0, payload.len() as u32, len + 8, cut)
    else {
        return;
    };
    salvaged(present, &s);
    let whole = Message {
        kind: MessageKind::Regular,
        offset: 0,
        index: 0,
        size_field: len as u32,
        payload: present,
        len: len + 8,
    };
    let Ok(events) = whole.events() else { return };
    let views: Vec<_> = events.collect();
    // Events of a builder's payload never share bytes; a crafted list
    // whose events do is salvaged only as far as their bytes fit.
    let shared = fb_format::skim::event_list(present).is_none_or(|(_, start)| {
        let total: usize = (0..views.len())
            .map(|i| {
                fb_format::skim::listed_event(present, start, i).map_or(0, |(_, b, _)| b.len())
            })
            .sum();
        total > present.len()
    });
    if views.iter().all(Result::is_ok) && !shared {
        let r = &s.report;
        assert_eq!(
            (r.kept, r.withheld, r.lost_count()),
            (r.listed, 0, 0),
            "{r:?}"
        );
        let again: Vec<_> = s.message().events().expect("verifies").collect();
        assert_eq!(again.len(), views.len());
        for (a, b) in again.iter().zip(&views) {
            let (a, b) = (a.as_ref().expect("verifies"), b.as_ref().expect("verifies"));
            assert_eq!(
                (a.id, a.enqueued, a.raw_payload()),
                (b.id, b.enqueued, b.raw_payload())
            );
        }
    }
}

/// Target (b), typed decoding of a REGULAR payload: the input is the
/// payload. Every event is decoded with [`PayloadDecoder::payload`] and
/// every field read. The same bytes are also read as a `FileHeader` and a
/// `CheckpointInfo`.
pub fn decode(data: &[u8]) {
    quick_agrees(data);
    let msg = Message {
        kind: MessageKind::Regular,
        offset: 0,
        index: 0,
        size_field: u32::try_from(data.len()).unwrap_or(u32::MAX),
        payload: data,
        len: data.len() + 8,
    };
    let mut sink = std::io::sink();
    if let Ok(header) = msg.file_header() {
        let _ = write!(sink, "{header:?}");
    }
    if let Ok(info) = msg.checkpoint() {
        let _ = write!(sink, "{info:?}");
    }
    if let Ok(payload) = msg.joined_payload() {
        for joined in payload.events().iter().flatten() {
            if let Some(event) = joined.event() {
                quick_agrees(event.bytes());
            }
        }
    }
    skimmed_events_agree(&msg);
    let Ok(events) = msg.events() else {
        return;
    };
    let total = events.total();
    let mut decoder = PayloadDecoder::new(1 << 20);
    let mut seen = 0;
    for event in events {
        seen += 1;
        let Ok(view) = event else {
            continue;
        };
        let _ = write!(
            sink,
            "{} {:?} {:?} {:?} {}",
            view.id,
            view.enqueued,
            view.client_time(),
            view.payload_type(),
            view.raw_payload().len()
        );
        if let Ok(bytes) = decoder.bytes(&view) {
            quick_agrees(bytes);
        }
        if let Ok(payload) = decoder.payload(&view) {
            let _ = write!(sink, "{} {payload:?}", payload.table_name());
        }
    }
    assert_eq!(seen, total, "Events yielded a different count than total()");
}

/// The walk of a payload's events that `fb index` reads
/// (`fb_format::skim::SkimmedEvents`) yields, for every event the verified
/// events (`Message::events`) give whole, the same id, kind and times.
/// (It reads less than they do, so it may yield where they refuse.)
fn skimmed_events_agree(msg: &Message<'_>) {
    let walked: Vec<_> = fb_format::skim::SkimmedEvents::new(msg.payload).collect();
    let Ok(events) = msg.events() else { return };
    let views: Vec<_> = events.collect();
    if views.iter().any(Result::is_err) {
        return;
    }
    assert_eq!(walked.len(), views.len());
    for (walk, view) in walked.iter().zip(&views) {
        let (walk, view) = (
            walk.expect("an event that verifies is skimmed"),
            view.as_ref().expect("checked above"),
        );
        assert_eq!(
            (walk.enqueued, walk.id),
            (view.enqueued, view.id.as_bytes())
        );
        assert_eq!(walk.payload_type, view.payload_type());
        assert_eq!(
            walk.client_time.filter(|t| !t.is_zero()),
            view.client_time()
        );
    }
}

/// The fast verifier (`fb_schema::QuickVerify`) says yes exactly when the
/// flatbuffers verifier does, for `buf` read as each table it checks
/// itself (`EpisodeEvent` always defers). A yes where flatbuffers says no
/// would let bad bytes be read unchecked; a no where it says yes would
/// only be slow, but is a bug all the same (limits apart, which inputs
/// this small never reach).
pub fn quick_agrees(buf: &[u8]) {
    use fb_schema::QuickVerify as _;
    macro_rules! agree {
        ($($table:ident),*) => {$(
            assert_eq!(
                fb_schema::$table::quick(buf),
                fb_schema::verified::<fb_schema::$table>(buf).is_ok(),
                concat!("quick and flatbuffers verifiers disagree on a ", stringify!($table))
            );
        )*};
    }
    agree!(
        JoinedPayload,
        Event,
        CbEvent,
        MultiSlotEvent,
        CaEvent,
        OutcomeEvent,
        DedupInfo,
        MultiStepEvent
    );
    parts_agree(buf);
}

/// What the fast verifier reads while verifying (`event_parts`,
/// `cb_parts`, `outcome_parts`) is what the accessors read from the buffer
/// the flatbuffers verifier accepted. Compared as Debug text, so that NaNs
/// made of random bytes compare equal.
fn parts_agree(buf: &[u8]) {
    fn same(a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug, what: &str) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}");
    }
    if let Some(p) = fb_schema::event_parts(buf) {
        let e = fb_schema::verified::<fb_schema::Event>(buf).expect("quick said yes");
        same(&p.payload, &e.payload().map(|v| v.bytes()), "Event.payload");
        same(&p.meta.is_some(), &e.meta().is_some(), "Event.meta");
        if let Some(m) = e.meta() {
            same(&p.id, &m.id(), "Metadata.id");
            same(&p.payload_type, &m.payload_type(), "Metadata.payload_type");
            same(&p.encoding, &m.encoding(), "Metadata.encoding");
            same(
                &p.pass_probability,
                &m.pass_probability(),
                "Metadata.pass_probability",
            );
            // The parts borrow the `TimeStamp`'s 12 bytes; the accessor
            // gives the struct: compare the bytes.
            same(
                &p.client_time.copied(),
                &m.client_time_utc().map(|t| t.0),
                "Metadata.client_time_utc",
            );
        }
    }
    if let Some(p) = fb_schema::cb_parts(buf) {
        let cb = fb_schema::verified::<fb_schema::CbEvent>(buf).expect("quick said yes");
        same(
            &p.deferred_action,
            &cb.deferred_action(),
            "CbEvent.deferred_action",
        );
        same(
            &p.action_ids,
            &cb.action_ids().map(|v| v.bytes()),
            "CbEvent.action_ids",
        );
        same(
            &p.context,
            &cb.context().map(|v| v.bytes()),
            "CbEvent.context",
        );
        same(
            &p.probabilities,
            &cb.probabilities().map(|v| v.bytes()),
            "CbEvent.probabilities",
        );
        same(&p.model_id, &cb.model_id(), "CbEvent.model_id");
        same(
            &p.learning_mode,
            &cb.learning_mode(),
            "CbEvent.learning_mode",
        );
    }
    if let Some(p) = fb_schema::outcome_parts(buf) {
        let o = fb_schema::verified::<fb_schema::OutcomeEvent>(buf).expect("quick said yes");
        same(&p.value, &o.value(), "OutcomeEvent.value");
        same(&p.index, &o.index(), "OutcomeEvent.index");
        same(
            &p.action_taken,
            &o.action_taken(),
            "OutcomeEvent.action_taken",
        );
    }
}
