//! Recovery of damaged logs: `fb_format::recover::RecoveringReader`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

#[path = "../../../fuzz/harness/format.rs"]
mod harness;

use common::{read, read_all, valid_logs, Owned};
use fb_format::recover::{Recovered, RecoveringReader, SkipReason};
use fb_format::{MessageKind, TYPE_CHECKPOINT, TYPE_EOF, TYPE_FILEMAGIC, TYPE_REGULAR};
use fb_tests::Rng;

/// Every item, in order, as a short string: `REGULAR@40` for a message,
/// `skip 8..13 unknown` for a skipped range.
fn describe(data: &[u8]) -> Vec<String> {
    RecoveringReader::new(data)
        .map(|item| item_str(&item))
        .collect()
}

fn item_str(item: &Recovered<'_>) -> String {
    match item {
        Recovered::Message(m) => format!("{}@{}", m.kind.name(), m.offset),
        Recovered::Salvaged(s) => format!(
            "salvaged {}@{} {}/{}",
            s.message().kind.name(),
            s.report.offset,
            s.report.kept,
            s.report.listed
        ),
        Recovered::Skipped(s) => {
            let why = match &s.reason {
                SkipReason::UnknownType(_) => "unknown",
                SkipReason::UnsupportedVersion(_) => "version",
                SkipReason::PayloadTooLarge { .. } => "too_large",
                SkipReason::Truncated { .. } => "truncated",
                SkipReason::InvalidPayload { .. } => "invalid",
                SkipReason::AfterEof => "after_eof",
                SkipReason::ScanLimit => "scan_limit",
                SkipReason::BadEvent { .. } => "bad_event",
                other => panic!("unexpected reason {other:?}"),
            };
            format!("skip {}..{} {why}", s.start, s.end)
        }
    }
}

/// One framed message: type, size, payload, `size % 8` zero bytes.
fn frame(type_id: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = type_id.to_le_bytes().to_vec();
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out.resize(out.len() + payload.len() % 8, 0);
    out
}

fn magic(version: u32) -> Vec<u8> {
    let mut out = TYPE_FILEMAGIC.to_le_bytes().to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out
}

/// Builds a log piece by piece and remembers where each piece starts.
#[derive(Default)]
struct Log {
    bytes: Vec<u8>,
}

impl Log {
    /// Appends `piece`, returns its offset.
    fn add(&mut self, piece: &[u8]) -> usize {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(piece);
        at
    }
}

/// The messages of `cb_simple.log` (FILEMAGIC, HEADER, CHECKPOINT,
/// REGULAR, EOF), framed.
struct Parts {
    magic: Vec<u8>,
    header: Vec<u8>,
    checkpoint: Vec<u8>,
    regular: Vec<u8>,
    regular_payload: Vec<u8>,
    eof: Vec<u8>,
}

fn parts() -> Parts {
    let data = read("valid_joined_logs/cb_simple.log");
    let (messages, error) = read_all(&data);
    assert!(error.is_none());
    let bytes = |kind: MessageKind| -> Vec<u8> {
        let m = messages.iter().find(|m| m.kind == kind).unwrap();
        data[m.offset as usize..m.offset as usize + m.len].to_vec()
    };
    let regular_payload = messages
        .iter()
        .find(|m| m.kind == MessageKind::Regular)
        .unwrap()
        .payload
        .clone();
    Parts {
        magic: bytes(MessageKind::FileMagic),
        header: bytes(MessageKind::Header),
        checkpoint: bytes(MessageKind::Checkpoint),
        regular: bytes(MessageKind::Regular),
        regular_payload,
        eof: bytes(MessageKind::Eof),
    }
}

/// Named cases of damage, each with the exact items expected.
#[test]
fn damage_cases() {
    let p = parts();
    type Case = (&'static str, Box<dyn Fn(&Parts) -> (Vec<u8>, Vec<String>)>);
    let cases: Vec<Case> = vec![
        ("empty input", Box::new(|_| (Vec::new(), vec![]))),
        (
            "intact log",
            Box::new(|p| {
                let mut log = Log::default();
                let m = log.add(&p.magic);
                let h = log.add(&p.header);
                let c = log.add(&p.checkpoint);
                let r = log.add(&p.regular);
                let e = log.add(&p.eof);
                let expected = vec![
                    format!("FILEMAGIC@{m}"),
                    format!("HEADER@{h}"),
                    format!("CHECKPOINT@{c}"),
                    format!("REGULAR@{r}"),
                    format!("EOF@{e}"),
                ];
                (log.bytes, expected)
            }),
        ),
        (
            "garbage between checkpoint and regular",
            Box::new(|p| {
                let mut log = Log::default();
                log.add(&p.magic);
                let c = log.add(&p.checkpoint);
                let junk = log.add(&[1, 2, 3, 4, 5, 6, 7]);
                let r = log.add(&p.regular);
                let expected = vec![
                    "FILEMAGIC@0".into(),
                    format!("CHECKPOINT@{c}"),
                    format!("skip {junk}..{r} unknown"),
                    format!("REGULAR@{r}"),
                ];
                (log.bytes, expected)
            }),
        ),
        (
            "regular whose JoinedPayload is corrupt is skipped whole",
            Box::new(|p| {
                let mut log = Log::default();
                log.add(&p.magic);
                let c = log.add(&p.checkpoint);
                // A root offset pointing past the end of the buffer.
                let mut bad = p.regular_payload.clone();
                bad[..4].copy_from_slice(&u32::MAX.to_le_bytes());
                let r1 = log.add(&frame(TYPE_REGULAR, &bad));
                let r2 = log.add(&p.regular);
                let e = log.add(&p.eof);
                let expected = vec![
                    "FILEMAGIC@0".into(),
                    format!("CHECKPOINT@{c}"),
                    format!("skip {r1}..{r2} invalid"),
                    format!("REGULAR@{r2}"),
                    format!("EOF@{e}"),
                ];
                (log.bytes, expected)
            }),
        ),
        (
            "corrupt checkpoint is skipped",
            Box::new(|p| {
                let mut log = Log::default();
                let c = log.add(&frame(TYPE_CHECKPOINT, &[0xFF; 12]));
                let r = log.add(&p.regular);
                (
                    log.bytes,
                    vec![format!("skip {c}..{r} invalid"), format!("REGULAR@{r}")],
                )
            }),
        ),
        (
            "unsupported FILEMAGIC version at the start",
            Box::new(|p| {
                let mut log = Log::default();
                log.add(&magic(2));
                let c = log.add(&p.checkpoint);
                (
                    log.bytes,
                    vec![format!("skip 0..{c} version"), format!("CHECKPOINT@{c}")],
                )
            }),
        ),
        (
            "unsupported FILEMAGIC version mid-file",
            Box::new(|p| {
                let mut log = Log::default();
                log.add(&p.magic);
                let c = log.add(&p.checkpoint);
                let m = log.add(&magic(7));
                let r = log.add(&p.regular);
                (
                    log.bytes,
                    vec![
                        "FILEMAGIC@0".into(),
                        format!("CHECKPOINT@{c}"),
                        format!("skip {m}..{r} version"),
                        format!("REGULAR@{r}"),
                    ],
                )
            }),
        ),
        (
            "message of unknown type is skipped whole",
            Box::new(|p| {
                let mut log = Log::default();
                let c = log.add(&p.checkpoint);
                let u = log.add(&frame(0x1234_5678, &[0; 13]));
                let r = log.add(&p.regular);
                (
                    log.bytes,
                    vec![
                        format!("CHECKPOINT@{c}"),
                        format!("skip {u}..{r} unknown"),
                        format!("REGULAR@{r}"),
                    ],
                )
            }),
        ),
        (
            "size field beyond the end of the input",
            Box::new(|p| {
                let mut log = Log::default();
                let c = log.add(&p.checkpoint);
                let mut big = p.regular.clone();
                big[4..8].copy_from_slice(&1_000_000u32.to_le_bytes());
                let r = log.add(&big);
                let r2 = log.add(&p.regular);
                (
                    log.bytes,
                    vec![
                        format!("CHECKPOINT@{c}"),
                        // Only the size field is wrong: every event of the
                        // message is still there, and salvaged.
                        format!("salvaged REGULAR@{r} 2/2"),
                        format!("skip {r}..{r2} truncated"),
                        format!("REGULAR@{r2}"),
                    ],
                )
            }),
        ),
        (
            "size field above the payload limit",
            Box::new(|p| {
                let mut log = Log::default();
                let c = log.add(&p.checkpoint);
                let mut big = p.regular.clone();
                big[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
                let r = log.add(&big);
                let r2 = log.add(&p.regular);
                (
                    log.bytes,
                    vec![
                        format!("CHECKPOINT@{c}"),
                        format!("salvaged REGULAR@{r} 2/2"),
                        format!("skip {r}..{r2} too_large"),
                        format!("REGULAR@{r2}"),
                    ],
                )
            }),
        ),
        (
            "truncated last message",
            Box::new(|p| {
                let mut log = Log::default();
                let c = log.add(&p.checkpoint);
                let r = log.add(&p.regular[..p.regular.len() - 5]);
                let end = log.bytes.len();
                (
                    log.bytes,
                    vec![
                        format!("CHECKPOINT@{c}"),
                        // Event 0 lies at the end of the payload, cut; the
                        // other is whole.
                        format!("salvaged REGULAR@{r} 1/2"),
                        format!("skip {r}..{end} truncated"),
                    ],
                )
            }),
        ),
        (
            "EOF cut inside its size field still ends the log",
            Box::new(|p| {
                let mut log = Log::default();
                let c = log.add(&p.checkpoint);
                let e = log.add(&TYPE_EOF.to_le_bytes()[..]);
                log.add(&[0, 0]);
                (
                    log.bytes,
                    vec![format!("CHECKPOINT@{c}"), format!("EOF@{e}")],
                )
            }),
        ),
        (
            "two logs concatenated: reading goes on after the EOF",
            Box::new(|p| {
                let mut log = Log::default();
                let mut expected = Vec::new();
                for _ in 0..2 {
                    expected.push(format!("FILEMAGIC@{}", log.add(&p.magic)));
                    expected.push(format!("HEADER@{}", log.add(&p.header)));
                    expected.push(format!("CHECKPOINT@{}", log.add(&p.checkpoint)));
                    expected.push(format!("REGULAR@{}", log.add(&p.regular)));
                    expected.push(format!("EOF@{}", log.add(&p.eof)));
                }
                (log.bytes, expected)
            }),
        ),
        (
            "junk between two concatenated logs",
            Box::new(|p| {
                let mut log = Log::default();
                log.add(&p.magic);
                let r = log.add(&p.regular);
                let e = log.add(&p.eof);
                let junk = log.add(&[0x42; 33]);
                let m = log.add(&p.magic);
                let r2 = log.add(&p.regular);
                (
                    log.bytes,
                    vec![
                        "FILEMAGIC@0".into(),
                        format!("REGULAR@{r}"),
                        format!("EOF@{e}"),
                        format!("skip {junk}..{m} after_eof"),
                        format!("FILEMAGIC@{m}"),
                        format!("REGULAR@{r2}"),
                    ],
                )
            }),
        ),
        (
            "bytes after the final EOF are reported",
            Box::new(|p| {
                let mut log = Log::default();
                let r = log.add(&p.regular);
                let e = log.add(&p.eof);
                let junk = log.add(&[0; 24]);
                let end = log.bytes.len();
                (
                    log.bytes,
                    vec![
                        format!("REGULAR@{r}"),
                        format!("EOF@{e}"),
                        format!("skip {junk}..{end} after_eof"),
                    ],
                )
            }),
        ),
        (
            "nothing but garbage",
            Box::new(|_| (vec![0xFF; 100], vec!["skip 0..100 too_large".into()])),
        ),
        (
            "a lone type field",
            Box::new(|_| {
                (
                    TYPE_REGULAR.to_le_bytes().to_vec(),
                    vec!["skip 0..4 truncated".into()],
                )
            }),
        ),
        (
            "a message header inside garbage that does not verify is not taken",
            Box::new(|p| {
                let mut log = Log::default();
                let junk = log.add(&[7; 5]);
                log.add(&frame(TYPE_REGULAR, &[1, 2, 3, 4, 5, 6, 7, 8]));
                let r = log.add(&p.regular);
                (
                    log.bytes,
                    vec![format!("skip {junk}..{r} unknown"), format!("REGULAR@{r}")],
                )
            }),
        ),
    ];
    for (name, build) in cases {
        let (data, expected) = build(&p);
        assert_eq!(describe(&data), expected, "{name}");
    }
}

/// The limit given to the reader applies.
#[test]
fn payload_limit_is_the_callers() {
    let p = parts();
    let mut log = Log::default();
    let r = log.add(&p.regular);
    let e = log.add(&p.eof);
    let items: Vec<String> = RecoveringReader::with_max_payload(&log.bytes, 16)
        .map(|i| item_str(&i))
        .collect();
    assert_eq!(
        items,
        vec![format!("skip {r}..{e} too_large"), format!("EOF@{e}")]
    );
}

/// Offsets, indexes and the display of a skipped range.
#[test]
fn skipped_ranges_say_where_and_why() {
    let p = parts();
    let mut log = Log::default();
    log.add(&p.magic);
    log.add(&[9; 3]);
    log.add(&p.checkpoint);
    let items: Vec<Recovered<'_>> = RecoveringReader::new(&log.bytes).collect();
    let Recovered::Skipped(s) = &items[1] else {
        panic!("{items:?}")
    };
    assert_eq!((s.start, s.end, s.len()), (8, 11, 3));
    assert!(!s.is_empty());
    assert_eq!(
        s.to_string(),
        "skipped bytes 8..11 (3 bytes): unknown message type 0x11090909"
    );
    let Recovered::Message(c) = &items[2] else {
        panic!("{items:?}")
    };
    // Indexes count the messages yielded, not the skipped ranges.
    assert_eq!(
        (c.kind, c.offset, c.index),
        (MessageKind::Checkpoint, 11, 1)
    );
}

/// Every valid corpus log is read exactly as the plain reader reads it.
#[test]
fn intact_logs_recover_exactly_like_the_plain_reader() {
    for file in valid_logs() {
        let data = read(&file);
        let (plain, error) = read_all(&data);
        assert!(error.is_none(), "{file}");
        let mut got = Vec::new();
        for item in RecoveringReader::new(&data) {
            match item {
                Recovered::Message(m) => got.push(Owned::from(m)),
                Recovered::Salvaged(s) => panic!("{file}: {}", s.report),
                Recovered::Skipped(s) => panic!("{file}: {s}"),
            }
        }
        assert_eq!(got, plain, "{file}");
    }
}

/// Every message of every corpus log is found by a scan too (after a
/// junk byte), whose verifier limits are tighter than in step.
#[test]
fn every_corpus_message_is_found_by_a_scan() {
    let mut found = 0;
    for file in valid_logs() {
        let data = read(&file);
        for m in read_all(&data).0 {
            let mut input = vec![0xEE];
            input.extend_from_slice(&data[m.offset as usize..m.offset as usize + m.len]);
            assert_eq!(
                describe(&input)[..2],
                [
                    "skip 0..1 unknown".to_string(),
                    format!("{}@1", m.kind.name())
                ],
                "{file}: message at {}",
                m.offset
            );
            found += 1;
        }
    }
    assert!(found > 150, "{found}");
}

/// Crafted input that makes every scan candidate cost verification work
/// (a REGULAR header every 8 bytes, each claiming the rest of the input)
/// makes the scan give up instead of taking quadratic time.
#[test]
fn scan_work_is_bounded() {
    let n = 1 << 16;
    let mut data = Vec::with_capacity(n);
    while data.len() < n {
        let size = (n - data.len() - 8) as u32 & !7;
        data.extend_from_slice(&TYPE_REGULAR.to_le_bytes());
        data.extend_from_slice(&size.to_le_bytes());
    }
    assert_eq!(describe(&data), [format!("skip 0..{n} scan_limit")]);
}

/// Messages longer than this get sampled cuts (see below).
const EVERY_CUT_UP_TO: usize = 4096;

/// The cuts tried inside a message spanning `start..end`: all of them, or
/// for a message longer than [`EVERY_CUT_UP_TO`] the first and last `edge`
/// and every `stride`th between.
fn cuts_in(start: usize, end: usize, edge: usize, stride: usize) -> Vec<usize> {
    if end - start <= EVERY_CUT_UP_TO {
        return (start + 1..=end).collect();
    }
    let mut cuts: Vec<usize> = (start + 1..=start + edge).collect();
    cuts.extend((start + edge..end - edge).step_by(stride).skip(1));
    cuts.extend(end - edge..=end);
    cuts
}

/// Every valid corpus log cut short: every message wholly before the cut
/// comes back unchanged, then the partial message is one skipped range
/// from its start to the cut (an EOF that kept its type is an EOF), and
/// nothing else (nothing is found inside the partial message).
///
/// Each cut costs a scan of the partial message, so for the few messages
/// longer than 4 KiB (6, in the 4 largest files) the cuts are the first and
/// last 256 bytes of the message and every 251st byte between. The last
/// cut before the message ends covers the others: a candidate is judged on
/// its own bytes only and the scan tries every start, so a shorter cut can
/// only lose candidates, and the longest cut finds none.
#[test]
fn every_cut_keeps_every_whole_message() {
    let mut cuts_checked = 0usize;
    for file in valid_logs() {
        let data = read(&file);
        let (whole, _) = read_all(&data);
        let mut start = 0usize;
        for (k, msg) in whole.iter().enumerate() {
            let end = start + msg.len;
            for cut in cuts_in(start, end, 256, 251) {
                let into = cut - start;
                cuts_checked += 1;
                let mut expected: Vec<String> = whole[..k]
                    .iter()
                    .map(|m| format!("{}@{}", m.kind.name(), m.offset))
                    .collect();
                if cut == end || (msg.kind == MessageKind::Eof && into >= 4) {
                    expected.push(format!("{}@{}", msg.kind.name(), start));
                } else {
                    expected.push(format!("skip {start}..{cut} truncated"));
                }
                // A cut REGULAR message may also give back its last events
                // (salvage), announced just before its skipped range.
                let mut got = describe(&data[..cut]);
                if let Some(at) = got.iter().position(|g| g.starts_with("salvaged ")) {
                    let s = got.remove(at);
                    assert_eq!(msg.kind, MessageKind::Regular, "{file} cut at {cut}: {s}");
                    assert!(s.starts_with(&format!("salvaged REGULAR@{start} ")), "{s}");
                    assert_eq!(at, k, "{file} cut at {cut}: salvage out of place");
                }
                assert_eq!(got, expected, "{file} cut at {cut}");
            }
            start = end;
        }
        assert_eq!(start, data.len(), "{file}: bytes after the last message");
    }
    assert!(cuts_checked > 50_000, "{cuts_checked}");
}

/// Random bytes and randomly damaged logs: every byte is accounted for,
/// once, in order (the checks of the `framing` fuzz target).
#[test]
fn random_inputs_are_accounted_for() {
    let mut rng = Rng::new(7);
    let logs: Vec<Vec<u8>> = valid_logs()
        .iter()
        .map(|f| read(f))
        .filter(|d| d.len() < 8192)
        .collect();
    for round in 0..1_000 {
        let mut data = match round % 3 {
            0 => {
                let n = rng.below(300);
                rng.bytes(n)
            }
            _ => logs[rng.below(logs.len())].clone(),
        };
        for _ in 0..rng.below(4) {
            if data.is_empty() {
                break;
            }
            let at = rng.below(data.len());
            match rng.below(4) {
                0 => data[at] ^= 1 << rng.below(8),
                1 => data.truncate(at),
                2 => {
                    let n = rng.below(64);
                    let junk = rng.bytes(n);
                    data.splice(at..at, junk);
                }
                _ => {
                    let n = rng.below(16).min(data.len() - at);
                    data.drain(at..at + n);
                }
            }
        }
        let mut input = vec![rng.next() as u8, rng.next() as u8];
        input.extend_from_slice(&data);
        harness::framing(&input);
    }
}

/// The seeds of the `framing`, `decode` and `salvage` fuzz targets and
/// the inputs they found (`fuzz/seeds/<target>/*`,
/// `tests/data/fuzz/<target>/*`), replayed through each target's code: a
/// harness that cannot run on its own seeds fails here.
#[test]
fn fuzz_seeds_and_regressions_replay() {
    for (target, run) in [
        ("framing", harness::framing as fn(&[u8])),
        ("decode", harness::decode),
        ("salvage", harness::salvage),
    ] {
        for path in fb_tests::fuzz_inputs(target) {
            eprintln!("replaying {}", path.display());
            run(&std::fs::read(&path).unwrap());
        }
    }
}

/// Every REGULAR payload of the corpus, whole and cut at every 16th of its
/// length, in place and as a cut input: the `salvage` target's checks.
#[test]
fn salvage_checks_hold_on_cut_corpus_payloads() {
    let mut runs = 0;
    for file in valid_logs() {
        let data = read(&file);
        for msg in fb_format::SliceReader::new(&data) {
            let msg = msg.unwrap();
            if msg.kind != MessageKind::Regular {
                continue;
            }
            for keep in (0..128u8).step_by(8).chain([127]) {
                for cut in [0u8, 0x80] {
                    let mut input = vec![keep | cut];
                    input.extend_from_slice(msg.payload);
                    harness::salvage(&input);
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 500, "{runs}");
}
