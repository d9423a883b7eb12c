//! `fb inspect` run as a user runs it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{data, fb};

#[test]
fn inspect_lists_every_message_of_a_clean_log() {
    let path = data("valid_joined_logs/cb_simple.log");
    let common::Out {
        code,
        stdout,
        stderr,
    } = fb(&["inspect", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let expected = "
  index        offset  type              size  details
      0             0  FILEMAGIC            -  version 1
      1             8  HEADER             112
      2           128  CHECKPOINT          24
      3           160  REGULAR            492  2 events: 91f71c8
      4           664  EOF                  0
";
    // The literal starts with a newline so its first line keeps its indent.
    assert_eq!(stdout, &expected[1..]);
}

#[test]
fn inspect_flags_a_damaged_message_and_exits_1() {
    let path = data("invalid_joined_logs/corrupt_joined_payload.log");
    let common::Out { code, stdout, .. } = fb(&["inspect", path.to_str().unwrap()]);
    assert_eq!(code, 1);
    let line = stdout.lines().find(|l| l.contains("   160  ")).unwrap();
    assert!(
        line.contains("damaged: JoinedPayload in message 3 at byte 160"),
        "{line}"
    );
    assert!(stdout.contains("    664  REGULAR"), "{stdout}");
}

#[test]
fn inspect_reports_truncation_with_its_offset() {
    let mut log = std::fs::read(data("valid_joined_logs/cb_simple.log")).unwrap();
    log.truncate(log.len() - 20);
    let path = common::tmp().join("fb-inspect-cut.log");
    std::fs::write(&path, &log).unwrap();
    let common::Out {
        code,
        stdout,
        stderr,
    } = fb(&["inspect", path.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("REGULAR message 3 starting at byte 160"),
        "{stderr}"
    );
    assert!(stdout.contains("CHECKPOINT"), "{stdout}");
}

#[test]
fn inspect_of_a_missing_file_is_a_usage_error() {
    let common::Out { code, stderr, .. } = fb(&["inspect", "/nonexistent/file.log"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("/nonexistent/file.log"), "{stderr}");
}
