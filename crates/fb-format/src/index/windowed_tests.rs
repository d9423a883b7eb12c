//! An index built from a log read in windows (a file, or reads that come
//! back short) against the same log in memory.

use super::parts::{guess_start_reading, tests::repeated_log};
use super::source::{FileLog, LogSource};
use super::Index;
use crate::error::Error;

/// A log in memory handed out as a file would be, in reads of at most
/// `most` bytes, failing from byte `fails_at` on.
struct Reads<'a> {
    log: &'a [u8],
    most: usize,
    fails_at: u64,
}

impl<'a> Reads<'a> {
    fn new(log: &'a [u8], most: usize) -> Self {
        Self {
            log,
            most,
            fails_at: u64::MAX,
        }
    }
}

impl LogSource for Reads<'_> {
    fn len(&self) -> u64 {
        self.log.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.most);
        if offset + n as u64 > self.fails_at {
            return Err(std::io::Error::other("the disk went away"));
        }
        (&self.log).read_at(offset, &mut buf[..n])
    }
}

/// What the build tells done covers the log, each byte once.
fn each_byte_told_once(told: Vec<(u64, u64)>, len: usize, name: &str) {
    let mut covered = vec![0u8; len];
    for (from, to) in told {
        assert!(from <= to && to <= len as u64, "{name}");
        for c in &mut covered[from as usize..to as usize] {
            *c += 1;
        }
    }
    assert!(covered.iter().all(|&c| c == 1), "{name}");
}

fn temp_file(name: &str, bytes: &[u8]) -> (std::path::PathBuf, std::fs::File) {
    let path = std::env::temp_dir().join(format!("fb-windowed-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    (path, file)
}

/// A file, and reads that come back a few KB at a time: the index is the
/// one built from the bytes in memory, byte for byte, on any number of
/// threads, and every byte is told done once.
#[test]
fn a_log_read_in_windows_is_indexed_as_in_memory() {
    let log = repeated_log();
    let want = Index::build(&log).unwrap();
    assert!(want.blocks.len() > 10 && want.checkpoints.len() > 3);
    let (path, file) = temp_file("whole", &log);
    let sources: [(&str, &dyn LogSource); 3] = [
        ("a file", &FileLog::new(&file, log.len() as u64)),
        ("reads of 4093 bytes", &Reads::new(&log, 4093)),
        ("reads of 1 byte", &Reads::new(&log, 1)),
    ];
    for (name, source) in sources {
        for threads in [1, 2, 3, 5] {
            let told = std::sync::Mutex::new(Vec::new());
            let done = |from, to| told.lock().unwrap().push((from, to));
            let got = Index::build_in_parts(source, threads, 256 << 10, &done).unwrap();
            let name = format!("{name}, {threads} threads");
            assert_eq!(got.to_bytes(), want.to_bytes(), "{name}");
            each_byte_told_once(told.into_inner().unwrap(), log.len(), &name);
        }
    }
    std::fs::remove_file(path).unwrap();
}

/// Where a part may start is guessed from a file as from memory, however
/// little of the file the guess reads first.
#[test]
fn a_part_start_is_guessed_from_a_file_as_from_memory() {
    let log = repeated_log();
    for k in 1..16 {
        let target = log.len() as u64 / 16 * k;
        let want = guess_start_reading(&&log[..], target, &mut Vec::new(), 1);
        assert!(want.is_some(), "target {target}");
        for first in [1, 64, 4096, 1 << 20] {
            let got = guess_start_reading(&Reads::new(&log, 1000), target, &mut Vec::new(), first);
            assert_eq!(got, want, "target {target}, first read {first}");
        }
    }
}

/// A damaged log, read in windows, is refused with the error the bytes in
/// memory give.
#[test]
fn a_damaged_log_read_in_windows_gives_the_same_error() {
    let log = repeated_log();
    let one = Index::build(&log).unwrap();
    let at = one.blocks[one.blocks.len() * 3 / 4].start as usize;
    let mut header = log.clone();
    header[at..at + 8].copy_from_slice(&[0xff; 8]);
    let cut = log[..at + 20].to_vec();
    let cases: [(&str, &[u8]); 2] = [("a header that frames no message", &header), ("cut", &cut)];
    for (name, damaged) in cases {
        let want = Index::build(damaged).unwrap_err().to_string();
        for threads in [1, 2, 3] {
            let got =
                Index::build_in_parts(&Reads::new(damaged, 4093), threads, 256 << 10, &|_, _| {})
                    .unwrap_err();
            assert_eq!(got.to_string(), want, "{name}, {threads} threads");
        }
    }
}

/// A read that fails is an error of its own (not damage), on any number
/// of threads.
#[test]
fn a_failed_read_is_an_io_error() {
    let log = repeated_log();
    for fails_at in [10, log.len() as u64 / 2, log.len() as u64 - 10] {
        let source = Reads {
            log: &log,
            most: 1 << 20,
            fails_at,
        };
        for threads in [1, 3] {
            let got = Index::build_in_parts(&source, threads, 256 << 10, &|_, _| {});
            match got {
                Err(Error::Io { source, .. }) => {
                    assert_eq!(source.to_string(), "the disk went away")
                }
                other => panic!("fails at {fails_at}, {threads} threads: {other:?}"),
            }
        }
    }
}
