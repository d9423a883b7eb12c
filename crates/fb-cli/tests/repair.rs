//! `fb repair` run as a user runs it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::{Path, PathBuf};

use common::{data, fb};

use fb_format::{MessageKind, SliceReader};

/// A scratch path for one case.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("repair");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn repair(input: &Path, output: &Path) -> (i32, String) {
    let out = fb(&[
        Path::new("repair"),
        input,
        Path::new("--force"),
        Path::new("-o"),
        output,
    ]);
    (out.code, out.stderr)
}

fn validate(path: &Path) -> i32 {
    fb(&[Path::new("validate"), path]).code
}

/// A message as compared here: type and payload.
type Body = (MessageKind, Vec<u8>);

/// The HEADER, CHECKPOINT and REGULAR messages of a log read by the plain
/// reader, with the byte where each ends; `None` if reading fails.
fn bodies(data: &[u8]) -> Option<Vec<(Body, usize)>> {
    let mut out = Vec::new();
    for msg in SliceReader::new(data) {
        let msg = msg.ok()?;
        if matches!(
            msg.kind,
            MessageKind::Header | MessageKind::Checkpoint | MessageKind::Regular
        ) {
            out.push((
                (msg.kind, msg.payload.to_vec()),
                msg.offset as usize + msg.len,
            ));
        }
    }
    Some(out)
}

/// A repaired log parses cleanly: FILEMAGIC v1 first, EOF (size 0) last
/// and at the very end, `size % 8` zero padding everywhere, no unknown
/// type. Returns its HEADER, CHECKPOINT and REGULAR messages.
fn check_repaired(name: &str, bytes: &[u8]) -> Vec<Body> {
    let mut reader = SliceReader::new(bytes);
    let mut kinds = Vec::new();
    let mut out = Vec::new();
    let mut end = 0;
    while let Some(msg) = reader
        .next_message()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
    {
        kinds.push(msg.kind);
        let start = msg.offset as usize;
        let padding = &bytes[start + 8 + msg.payload.len()..start + msg.len];
        assert_eq!(padding.len(), msg.payload.len() % 8, "{name}");
        assert!(padding.iter().all(|b| *b == 0), "{name}: padding");
        match msg.kind {
            MessageKind::FileMagic => assert_eq!((start, msg.size_field), (0, 1), "{name}"),
            MessageKind::Eof => assert_eq!(msg.size_field, 0, "{name}"),
            MessageKind::Unknown(_) => panic!("{name}: unknown type"),
            _ => out.push((msg.kind, msg.payload.to_vec())),
        }
        end = start + msg.len;
    }
    assert_eq!(kinds.first(), Some(&MessageKind::FileMagic), "{name}");
    assert_eq!(kinds.last(), Some(&MessageKind::Eof), "{name}");
    let magics = kinds
        .iter()
        .filter(|k| **k == MessageKind::FileMagic)
        .count();
    let eofs = kinds.iter().filter(|k| **k == MessageKind::Eof).count();
    assert_eq!((magics, eofs), (1, 1), "{name}");
    assert_eq!(end, bytes.len(), "{name}: bytes after the EOF");
    out
}

/// Truncated corpus logs: the repaired file parses cleanly, holds exactly
/// the messages wholly before the cut, `fb validate` accepts it whenever it
/// accepts the intact log, and the exit code says whether anything was
/// dropped.
#[test]
fn repair_of_truncated_logs() {
    // (name, file, where to cut: bytes from the end)
    let cases: &[(&str, &str, usize)] = &[
        (
            "cut inside the last REGULAR",
            "skip_learn/cb/deferred_action_with_activation.fb",
            100,
        ),
        (
            "cut inside the EOF type",
            "valid_joined_logs/ccb_simple.log",
            6,
        ),
        (
            "cut inside a padding",
            "valid_joined_logs/cb_simple.log",
            10,
        ),
        (
            "cut inside the EOF size",
            "valid_joined_logs/cb_simple.log",
            2,
        ),
        (
            "cut at a boundary (EOF gone)",
            "valid_joined_logs/slates_simple.log",
            8,
        ),
        (
            "cut inside a CHECKPOINT",
            "valid_joined_logs/rrcr.fb",
            1112 - 730,
        ),
        (
            "cut inside the 2nd of 3 REGULARs",
            "valid_joined_logs/multistep_3_deferred_episodes.fb",
            1060,
        ),
        (
            "cut inside the header",
            "valid_joined_logs/ca_loop_simple.fb",
            2336 - 20,
        ),
        (
            "cut inside a large REGULAR",
            "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
            70_000,
        ),
        ("not cut", "valid_joined_logs/cb_dedup_compressed.log", 0),
    ];
    for (name, file, from_end) in cases {
        let whole = std::fs::read(data(file)).unwrap();
        let cut = whole.len() - from_end;
        let input = scratch(&format!("{name}.in"));
        let output = scratch(&format!("{name}.out"));
        std::fs::write(&input, &whole[..cut]).unwrap();

        let (code, stderr) = repair(&input, &output);
        let intact = bodies(&whole).unwrap();
        let before: Vec<Body> = intact
            .iter()
            .filter(|(_, end)| *end <= cut)
            .map(|(b, _)| b.clone())
            .collect();
        // Nothing is lost when the cut falls between messages, or after
        // the type field of the EOF (which then still ends the log).
        let at_boundary = cut == 0
            || SliceReader::new(&whole).any(|m| {
                let m = m.unwrap();
                let (start, end) = (m.offset as usize, m.offset as usize + m.len);
                end == cut || (m.kind == MessageKind::Eof && start + 4 <= cut && cut < end)
            });
        assert_eq!(code, if at_boundary { 0 } else { 1 }, "{name}: {stderr}");
        if code == 1 {
            assert!(
                stderr.contains(&format!("..{cut} (")),
                "{name}: the dropped range is not listed: {stderr}"
            );
        } else {
            assert!(stderr.contains("nothing dropped"), "{name}: {stderr}");
        }

        let repaired = std::fs::read(&output).unwrap();
        let mut got = check_repaired(name, &repaired);
        // A cut REGULAR message gives back its whole events (salvage), in
        // one more REGULAR message after the intact ones.
        if got.len() == before.len() + 1 {
            let (kind, _) = got.pop().unwrap();
            assert_eq!(kind, MessageKind::Regular, "{name}");
            assert!(stderr.contains("events salvaged"), "{name}: {stderr}");
        }
        assert_eq!(got, before, "{name}");
        if validate(&data(file)) == 0 {
            assert_eq!(
                validate(&output),
                0,
                "{name}: fb validate rejects the repair"
            );
        }
    }
}

/// Two logs with junk between them: one repaired log with the messages of
/// both, the junk listed with its offsets.
#[test]
fn repair_of_concatenated_logs_with_junk() {
    let a = std::fs::read(data("valid_joined_logs/cb_simple.log")).unwrap();
    let b = std::fs::read(data("valid_joined_logs/ca_loop_simple.fb")).unwrap();
    let mut joined = a.clone();
    joined.extend_from_slice(&[0x5A; 100]);
    joined.extend_from_slice(&b);
    let input = scratch("concat.in");
    let output = scratch("concat.out");
    std::fs::write(&input, &joined).unwrap();

    let (code, stderr) = repair(&input, &output);
    assert_eq!(code, 1, "{stderr}");
    let range = format!("bytes {}..{} (100 bytes)", a.len(), a.len() + 100);
    assert!(stderr.contains(&range), "{stderr}");
    let mut expected: Vec<Body> = bodies(&a).unwrap().into_iter().map(|(b, _)| b).collect();
    expected.extend(bodies(&b).unwrap().into_iter().map(|(b, _)| b));
    let repaired = std::fs::read(&output).unwrap();
    assert_eq!(check_repaired("concat", &repaired), expected);
}

/// A REGULAR whose payload is corrupt is reported dropped; its events that
/// still verify are kept in a REGULAR of their own; the rest is kept.
#[test]
fn repair_of_a_corrupt_regular() {
    let input = data("invalid_joined_logs/corrupt_joined_payload.log");
    let output = scratch("corrupt.out");
    let (code, stderr) = repair(&input, &output);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("bytes 160..664 (504 bytes): REGULAR"),
        "{stderr}"
    );
    let repaired = std::fs::read(&output).unwrap();
    let kinds: Vec<MessageKind> = check_repaired("corrupt", &repaired)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        kinds,
        [
            MessageKind::Header,
            MessageKind::Checkpoint,
            MessageKind::Regular,
            MessageKind::Regular
        ]
    );
    assert!(stderr.contains("events salvaged"), "{stderr}");
    assert_eq!(validate(&output), 0);
}

/// Usage and I/O errors exit 2 and leave no output behind.
#[test]
fn repair_usage_errors() {
    let missing = scratch("does-not-exist.fb");
    let output = scratch("never-written.fb");
    let _ = std::fs::remove_file(&output);
    let (code, stderr) = repair(&missing, &output);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cannot open") && stderr.contains("does-not-exist.fb"),
        "{stderr}"
    );
    assert!(!output.exists());

    let same = scratch("same.fb");
    std::fs::copy(data("valid_joined_logs/cb_simple.log"), &same).unwrap();
    let (code, stderr) = repair(&same, &same);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        std::fs::read(&same).unwrap(),
        std::fs::read(data("valid_joined_logs/cb_simple.log")).unwrap()
    );

    // Without -o, the repaired log goes to standard output (a pipe here),
    // and the output as a second argument is still taken.
    let to_stdout = std::process::Command::new(env!("CARGO_BIN_EXE_fb"))
        .arg("repair")
        .arg(&same)
        .output()
        .unwrap();
    assert_eq!(to_stdout.status.code(), Some(0));
    let positional = scratch("positional.fb");
    let _ = std::fs::remove_file(&positional);
    assert_eq!(fb(&[Path::new("repair"), &same, &positional]).code, 0);
    assert_eq!(to_stdout.stdout, std::fs::read(&positional).unwrap());
}
