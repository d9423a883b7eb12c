//! The recovering conversion (`convert_recovering`) on cut, corrupted and
//! concatenated corpus logs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

#[path = "../../../fuzz/harness/convert.rs"]
mod harness;

use std::time::Instant;

use fb_format::recover::SkipReason;
use fb_format::{Message, MessageKind, SliceReader};
use fb_join::{convert, convert_recovering, DiagnosticKind, Joiner, Options, RecoverySummary};
use fb_tests::{read, valid_logs, Rng};

/// The options the golden tests use for `file`.
fn options_for(file: &str) -> Options {
    Options::default().multistep(file.contains("multistep"))
}

fn recover(data: &[u8], opts: Options) -> (Vec<u8>, RecoverySummary) {
    let mut joiner = Joiner::new(opts);
    let mut out = Vec::new();
    let report = convert_recovering(&mut joiner, data, &mut out).unwrap();
    (out, report)
}

fn lines(out: &[u8]) -> Vec<&[u8]> {
    out.split_inclusive(|b| *b == b'\n').collect()
}

/// What the intact file gives: its messages (offset, length, kind), its
/// DSJSON, and how many lines exist once the first k messages are read.
struct Intact {
    data: Vec<u8>,
    messages: Vec<(usize, usize, MessageKind)>,
    out: Vec<u8>,
    lines_after: Vec<usize>,
    diagnostics: Vec<(DiagnosticKind, u64)>,
}

impl Intact {
    fn new(file: &str) -> Self {
        let data = read(file);
        let opts = options_for(file);
        let mut plain = Vec::new();
        convert(&data[..], &mut plain, opts.clone()).unwrap();
        // The same, one message at a time, counting lines.
        let mut joiner = Joiner::new(opts);
        let mut messages = Vec::new();
        let mut lines_after = vec![0];
        let mut count = 0;
        for msg in SliceReader::new(&data) {
            let msg: Message<'_> = msg.unwrap();
            messages.push((msg.offset as usize, msg.len, msg.kind));
            joiner.push(&msg);
            while joiner.pop().is_some() {
                count += 1;
            }
            lines_after.push(count);
        }
        assert_eq!(count, lines(&plain).len(), "{file}");
        let diagnostics = joiner
            .diagnostics()
            .counts()
            .iter()
            .map(|(k, n)| (*k, *n))
            .collect();
        Self {
            data,
            messages,
            out: plain,
            lines_after,
            diagnostics,
        }
    }

    /// Index of the message holding byte `at`.
    fn message_at(&self, at: usize) -> usize {
        self.messages
            .iter()
            .position(|(offset, len, _)| at < offset + len)
            .unwrap_or(self.messages.len())
    }
}

/// Messages longer than this get sampled cuts: the first and last 64
/// bytes, and every 509th between (fb-format's
/// `every_cut_keeps_every_whole_message` samples more densely and explains
/// why the longest cut covers the others at the message level; here each
/// cut also converts every message before it, which is what costs).
const EVERY_CUT_UP_TO: usize = 4096;

/// The cuts tried inside a message spanning `start..end` (see
/// [`EVERY_CUT_UP_TO`]).
fn cuts_in(start: usize, end: usize) -> Vec<usize> {
    if end - start <= EVERY_CUT_UP_TO {
        return (start + 1..=end).collect();
    }
    let mut cuts: Vec<usize> = (start + 1..=start + 64).collect();
    cuts.extend((start + 64..end - 64).step_by(509).skip(1));
    cuts.extend(end - 64..=end);
    cuts
}

/// (i) Every corpus log cut at every byte (sampled inside the few messages
/// longer than 4 KiB): the recovering conversion writes exactly the lines
/// the intact file gives for the messages wholly before the cut, in order
/// (so every line is one of the intact file's and every whole message is
/// saved), and reports the partial message as one skipped range.
#[test]
fn every_cut_writes_only_lines_of_the_intact_file() {
    let started = Instant::now();
    let mut cuts = 0usize;
    for file in valid_logs() {
        let intact = Intact::new(&file);
        let all_lines = lines(&intact.out);
        for (k, &(start, len, kind)) in intact.messages.iter().enumerate() {
            let end = start + len;
            for cut in cuts_in(start, end) {
                let into = cut - start;
                cuts += 1;
                let (out, report) = recover(&intact.data[..cut], options_for(&file));
                let whole = if cut == end || (kind == MessageKind::Eof && into >= 4) {
                    k + 1
                } else {
                    k
                };
                let expected = &all_lines[..intact.lines_after[whole]];
                let got = lines(&out);
                assert!(
                    got.get(..expected.len()) == Some(expected),
                    "{file} cut at {cut}: {} lines, expected {} first",
                    got.len(),
                    expected.len()
                );
                // After them, only lines of the cut message (salvaged), in
                // the order the intact file gives them.
                let of_cut = &all_lines[intact.lines_after[whole]
                    ..intact.lines_after[(whole + 1).min(intact.lines_after.len() - 1)]];
                let mut rest = of_cut.iter();
                for line in &got[expected.len()..] {
                    assert!(
                        rest.any(|l| l == line),
                        "{file} cut at {cut}: a salvaged line the cut message does not give"
                    );
                }
                if whole == k {
                    assert_eq!(report.skipped.len(), 1, "{file} cut at {cut}");
                    let s = &report.skipped[0];
                    assert_eq!((s.start, s.end), (start as u64, cut as u64), "{file}");
                    assert!(matches!(s.reason, SkipReason::Truncated { .. }), "{s}");
                } else {
                    assert!(report.skipped.is_empty(), "{file} cut at {cut}");
                }
            }
        }
    }
    eprintln!("{cuts} cuts in {:?}", started.elapsed());
}

/// How a corruption showed.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    skipped: usize,
    diagnosed: usize,
    silent_change: usize,
    no_effect: usize,
    /// Lines that are not UTF-8 (see `harness::CONTEXTS_ARE_UTF8_CHECKED`).
    not_utf8: usize,
}

/// (ii) Seeded random corruptions of every corpus log, half single bytes
/// set to another value, half 8 consecutive bytes overwritten: no panic;
/// every line is valid JSON; every message before the damaged one is read
/// in step (nothing before it is skipped, all its lines come first); damage
/// to a message's type or size field is reported as a skipped range unless
/// the output is unchanged; a REGULAR whose JoinedPayload no longer verifies is skipped whole,
/// from its offset to the next message. Damage inside a payload that still
/// verifies (a float, a character of a string) can change a line without a
/// report: those are counted, not failed.
///
/// 1,000 corruptions per file for files up to 16 KiB; the four larger
/// files (75 to 130 KiB, one conversion costs ~100 times more) get 100
/// each, to keep the test to a few seconds in a debug build.
#[test]
fn random_corruptions_are_reported_and_write_only_json() {
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut rng = Rng::new(2024);
    for file in valid_logs() {
        let intact = Intact::new(&file);
        let all_lines = lines(&intact.out);
        let rounds = if intact.data.len() <= 16 << 10 {
            1000
        } else {
            100
        };
        for round in 0..rounds {
            let mut data = intact.data.clone();
            let width = if round & 1 == 0 { 1 } else { 8 };
            let at = rng.below(data.len() + 1 - width.min(data.len()));
            let at_end = (at + width).min(data.len());
            for byte in &mut data[at..at_end] {
                let old = *byte;
                *byte = rng.next() as u8;
                if width == 1 && *byte == old {
                    *byte = old ^ 0xFF;
                }
            }
            if data == intact.data {
                continue;
            }
            tally.runs += 1;
            let what = format!("{file}: {width} bytes at {at}");
            let (out, report) = recover(&data, options_for(&file));
            let got = lines(&out);
            for line in &got {
                if let Err(e) = harness::check_json_line(line) {
                    panic!("{what}: {e}: {}", String::from_utf8_lossy(line));
                }
                if std::str::from_utf8(line).is_err() {
                    tally.not_utf8 += 1;
                }
            }

            // Everything before the damaged message is intact.
            let k = intact.message_at(at);
            let (start, len, kind) = intact.messages[k];
            assert!(
                report.skipped.iter().all(|s| s.start >= start as u64),
                "{what}: skipped before the damaged message: {:?}",
                report.skipped
            );
            let before = &all_lines[..intact.lines_after[k]];
            assert!(
                got.starts_with(before),
                "{what}: lines before the damage lost"
            );

            // Damage to the framing is always reported.
            let header = if kind == MessageKind::Eof { 4 } else { 8 };
            let in_header = at < start + header;
            // (A size field can grow and still frame a payload that
            // verifies, e.g. by swallowing the EOF that follows: nothing is
            // lost then, and the output must be unchanged.)
            if in_header && report.skipped.is_empty() {
                assert!(out == intact.out, "{what}: header damage unreported");
            }
            // A REGULAR that fails verification is skipped whole.
            let whole_regular_skipped = report.skipped.first().is_some_and(|s| {
                matches!(s.reason, SkipReason::InvalidPayload { .. }) && s.start == start as u64
            });
            if kind == MessageKind::Regular && !in_header && at_end <= start + len {
                if let Some(s) = report.skipped.first() {
                    if matches!(s.reason, SkipReason::InvalidPayload { .. }) {
                        assert!(whole_regular_skipped, "{what}: {s}");
                        assert_eq!(s.end, (start + len) as u64, "{what}: {s}");
                    }
                }
            }

            let diagnostics: Vec<(DiagnosticKind, u64)> = report
                .summary
                .diagnostics
                .counts()
                .iter()
                .map(|(k, n)| (*k, *n))
                .collect();
            if !report.skipped.is_empty() {
                tally.skipped += 1;
            } else if diagnostics != intact.diagnostics {
                tally.diagnosed += 1;
            } else if out != intact.out {
                tally.silent_change += 1;
            } else {
                tally.no_effect += 1;
            }
        }
    }
    eprintln!("{tally:?} in {:?}", started.elapsed());
    assert!(tally.runs > 30_000, "{tally:?}");
}

/// Converts `data` alone with a fresh joiner.
fn alone(data: &[u8], opts: Options) -> Vec<u8> {
    let mut out = Vec::new();
    let summary = convert(data, &mut out, opts).unwrap();
    assert!(summary.framing_error.is_none());
    out
}

/// (iii) Two valid logs with 1 KiB of random bytes between them: exactly
/// the lines of each log converted alone, and one skipped range, the
/// random bytes.
#[test]
fn two_logs_with_junk_between_give_both_logs_lines() {
    let cases = [
        (
            "cb then ccb",
            "valid_joined_logs/cb_simple.log",
            "valid_joined_logs/ccb_simple.log",
        ),
        (
            "slates then ca",
            "valid_joined_logs/slates_simple.log",
            "valid_joined_logs/ca_loop_simple.fb",
        ),
        (
            "first log without EOF",
            "valid_joined_logs/cb_joined_with_pdrop_05.fb",
            "valid_joined_logs/cb_apprentice_5.log",
        ),
        (
            "second log without FILEMAGIC",
            "valid_joined_logs/ccb_w_slot_id.log",
            "valid_joined_logs/rrcr.fb",
        ),
        (
            "same log twice, dedup",
            "valid_joined_logs/cb_dedup_compressed.log",
            "valid_joined_logs/cb_dedup_compressed.log",
        ),
    ];
    let mut rng = Rng::new(99);
    for (name, first, second) in cases {
        let (a, b) = (read(first), read(second));
        let junk: Vec<u8> = (0..1024).map(|_| rng.next() as u8).collect();
        let mut data = a.clone();
        data.extend_from_slice(&junk);
        data.extend_from_slice(&b);

        let opts = Options::default();
        let mut expected = alone(&a, opts.clone());
        expected.extend_from_slice(&alone(&b, opts.clone()));
        let (out, report) = recover(&data, opts);
        assert!(!out.is_empty(), "{name}");
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected),
            "{name}"
        );
        assert_eq!(report.skipped.len(), 1, "{name}: {:?}", report.skipped);
        let s = &report.skipped[0];
        assert_eq!(
            (s.start, s.end),
            (a.len() as u64, (a.len() + 1024) as u64),
            "{name}: {s}"
        );
        assert_eq!(report.skipped_bytes(), 1024, "{name}");
        let ends_with_eof = a.ends_with(&0xAAAA_AAAAu32.to_le_bytes()[..])
            || a.get(a.len() - 8..a.len() - 4) == Some(&0xAAAA_AAAAu32.to_le_bytes()[..]);
        if ends_with_eof {
            assert_eq!(s.reason, SkipReason::AfterEof, "{name}");
        }
    }
}

/// Two logs back to back, nothing between: both converted, nothing
/// skipped, although the first ends with an EOF.
#[test]
fn concatenated_logs_are_read_past_the_eof() {
    let a = read("valid_joined_logs/cb_simple.log");
    let b = read("valid_joined_logs/ca_loop_simple.fb");
    let mut data = a.clone();
    data.extend_from_slice(&b);
    let (out, report) = recover(&data, Options::default());
    let mut expected = alone(&a, Options::default());
    expected.extend_from_slice(&alone(&b, Options::default()));
    assert_eq!(out, expected);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(report.summary.messages, 10);
    assert!(report.summary.framing_error.is_none());
}

/// The reference's invalid logs: what recovery makes of each. The lines
/// are always those of the plain conversion (which goes on after a bad
/// REGULAR too); the skipped ranges say what the plain reader stops at or
/// skips.
#[test]
fn invalid_corpus_logs() {
    // (file, lines written, skipped ranges as (start, end))
    type Case = (&'static str, usize, &'static [(u64, u64)]);
    let cases: &[Case] = &[
        // An event that does not verify: its message is skipped, and its
        // good events after the bad one are salvaged (none here).
        ("bad_event_in_joined_event.log", 1, &[(160, 384)]),
        ("bad_magic.log", 0, &[(0, 4)]),
        ("bad_version.log", 0, &[(0, 8)]),
        ("corrupt_joined_payload.log", 1, &[(160, 664)]),
        ("empty_msg_hdr.log", 0, &[]),
        ("incomplete_checkpoint_info.log", 0, &[]),
        ("interaction_with_no_observation.log", 2, &[]),
        ("invalid_cb_context.log", 2, &[]),
        ("no_interaction_but_with_observation.log", 1, &[]),
        ("no_msg_hdr.log", 0, &[]),
    ];
    for (file, n, ranges) in cases {
        let data = read(&format!("invalid_joined_logs/{file}"));
        let (out, report) = recover(&data, Options::default());
        let mut plain = Vec::new();
        convert(&data[..], &mut plain, Options::default()).unwrap();
        let got: Vec<(u64, u64)> = report.skipped.iter().map(|s| (s.start, s.end)).collect();
        eprintln!("{file}: {} lines, {:?}", lines(&out).len(), report.skipped);
        assert_eq!((lines(&out).len(), got.as_slice()), (*n, *ranges), "{file}");
        assert_eq!(out, plain, "{file}");
    }
}

/// The `convert` fuzz target's seeds and the inputs it found
/// (`fuzz/seeds/convert/*`, `tests/data/fuzz/convert/*`), replayed
/// through its code.
#[test]
fn fuzz_seeds_and_regressions_replay() {
    for path in fb_tests::fuzz_inputs("convert") {
        eprintln!("replaying {}", path.display());
        harness::convert_all(&std::fs::read(&path).unwrap());
    }
}
