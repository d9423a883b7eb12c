//! Where the stream reader's reads land: at a destination that agrees
//! with the stream's position modulo 64, whatever the read sizes, and
//! from one reader to the next on a thread (which share a buffer), with
//! the same messages as the slice reader.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::io::Read;

use common::{read, read_all, valid_logs, Owned};
use fb_format::StreamReader;

/// Hands out `data` at most `step` bytes a read, noting each read whose
/// destination disagrees with the position modulo 64.
struct Recording<'a> {
    data: &'a [u8],
    pos: usize,
    step: usize,
    reads: usize,
    misplaced: Vec<(usize, usize)>,
}

impl Read for Recording<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !buf.is_empty() {
            self.reads += 1;
            let at = buf.as_ptr() as usize;
            if !at.wrapping_sub(self.pos).is_multiple_of(64) {
                self.misplaced.push((self.pos, at % 64));
            }
        }
        let n = buf.len().min(self.step).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The messages of `data` read in reads of at most `step` bytes, and the
/// recorder (reads made, reads misplaced).
fn stream(data: &[u8], step: usize) -> (Vec<Owned>, Recording<'_>) {
    let mut reader = StreamReader::new(Recording {
        data,
        pos: 0,
        step,
        reads: 0,
        misplaced: Vec::new(),
    });
    let mut out = Vec::new();
    while let Some(m) = reader.next_message().unwrap() {
        out.push(m.into());
    }
    (out, reader.into_inner())
}

#[test]
fn reads_agree_with_the_stream_position() {
    let cases = [
        ("a byte at a time", 1),
        ("odd reads", 4_093),
        ("pages", 4_096),
        ("a read chunk and a bit", (256 << 10) + 5),
        ("whole", usize::MAX),
    ];
    let mut logs = 0;
    for file in valid_logs() {
        let data = read(&file);
        let (expected, error) = read_all(&data);
        if error.is_some() || data.len() > 4 << 20 {
            continue;
        }
        logs += 1;
        for (case, step) in cases {
            if step == 1 && data.len() > 64 << 10 {
                continue;
            }
            // Twice on this thread: the second reader starts in the buffer
            // the first one left.
            for round in ["first", "second"] {
                let (got, recorded) = stream(&data, step);
                assert_eq!(got, expected, "{file} {case} {round}");
                assert!(recorded.reads > 0, "{file} {case} {round}");
                assert!(
                    recorded.misplaced.is_empty(),
                    "{file} {case} {round}: {} of {} reads misplaced, first {:?}",
                    recorded.misplaced.len(),
                    recorded.reads,
                    recorded.misplaced.first()
                );
            }
        }
    }
    assert!(logs >= 5, "{logs} logs read");
}
