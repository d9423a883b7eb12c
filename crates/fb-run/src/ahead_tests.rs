//! `ahead`'s tests: what each input reads as, the bounds, and helpers
//! that stop (their input dropped, the read-ahead dropped, a panic).

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use super::*;

/// Bytes that differ from one offset to the next, so that a chunk
/// read twice or skipped shows.
fn content(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8)
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fb-ahead-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What each kind of input gives, taken in order from two helpers:
/// the bytes of a regular file of any size around the read-ahead's
/// limit, exactly once and in order, and its size; everything that is
/// not a regular file left to the framing thread.
#[test]
fn each_input_reads_as_the_file_it_names() {
    let dir = scratch("kinds");
    let sizes = [
        ("empty", 0),
        ("three bytes", 3),
        ("a head", 4),
        ("small", 1000),
        ("one less than the limit", FIRST_BYTES_MAX - 1),
        ("the limit", FIRST_BYTES_MAX),
        ("one more than the limit", FIRST_BYTES_MAX + 1),
        ("several times the limit", 3 * FIRST_BYTES_MAX + 7),
    ];
    let mut paths = Vec::new();
    let mut want = Vec::new();
    for (i, (name, len)) in sizes.iter().enumerate() {
        let path = dir.join(format!("{i}.fb"));
        std::fs::write(&path, content(i, *len)).unwrap();
        paths.push(Some(path));
        want.push((*name, Some(content(i, *len))));
    }
    for (name, path) in [
        ("not a path", None),
        ("missing", Some(dir.join("missing.fb"))),
        ("a directory", Some(dir.clone())),
        ("a device", Some(PathBuf::from("/dev/null"))),
    ] {
        paths.push(path);
        want.push((name, None));
    }
    // Twice over, to see buffers reused.
    let paths: Vec<_> = paths.iter().chain(&paths).cloned().collect();
    let want: Vec<_> = want.iter().chain(&want).cloned().collect();
    let ahead = ReadAhead::start(paths, 2).unwrap();
    for (i, (name, bytes)) in want.iter().enumerate() {
        match (ahead.take(i), bytes) {
            (Ahead::Opened(mut file), Some(bytes)) => {
                assert_eq!(file.size(), bytes.len() as u64, "{name}");
                let mut read = Vec::new();
                file.read_to_end(&mut read).unwrap();
                assert!(&read == bytes, "{name}: other bytes");
            }
            (Ahead::Skipped, None) => {}
            (other, _) => panic!("{name}: {other:?}"),
        }
    }
    drop(ahead);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Helpers stay at most [`INPUTS_AHEAD`] inputs ahead of the one taken
/// last; inputs passed over are dropped; a read-ahead dropped early
/// stops its helpers (the drop joins them).
#[test]
fn helpers_stay_within_bounds_and_stop_when_dropped() {
    let dir = scratch("bounds");
    let paths: Vec<Option<PathBuf>> = (0..100)
        .map(|i| {
            let path = dir.join(format!("{i:03}.fb"));
            std::fs::write(&path, content(i, 100 + i)).unwrap();
            Some(path)
        })
        .collect();
    let ahead = ReadAhead::start(paths, 3).unwrap();
    let mut first = Vec::new();
    match ahead.take(0) {
        Ahead::Opened(mut file) => file.read_to_end(&mut first).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(first, content(0, 100));
    // Give the helpers time to run as far ahead as they may.
    for _ in 0..100 {
        let state = lock(&ahead.shared.state);
        if state.ready.len() >= INPUTS_AHEAD {
            break;
        }
        drop(state);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    {
        let state = lock(&ahead.shared.state);
        assert!(state.next <= 1 + INPUTS_AHEAD, "next {}", state.next);
        assert!(state.ready.len() <= INPUTS_AHEAD);
    }
    // Passing over inputs 1 to 49.
    match ahead.take(50) {
        Ahead::Opened(mut file) => {
            let mut read = Vec::new();
            file.read_to_end(&mut read).unwrap();
            assert_eq!(read, content(50, 150));
        }
        other => panic!("{other:?}"),
    }
    assert!(lock(&ahead.shared.state).ready.keys().all(|&i| i > 50));
    drop(ahead);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Larger files read on by their helper: one dropped part read lets
/// its helper go on to the next, which reads whole and right; a
/// read-ahead dropped while a helper waits to hand over a chunk of an
/// input never taken ends (the drop joins the helpers).
#[test]
fn helpers_reading_on_stop_when_their_input_goes() {
    let dir = scratch("more");
    let len = 5 * CHUNK_BYTES + 3;
    let paths: Vec<Option<PathBuf>> = (0..3)
        .map(|i| {
            let path = dir.join(format!("{i}.fb"));
            std::fs::write(&path, content(i, len)).unwrap();
            Some(path)
        })
        .collect();
    let ahead = ReadAhead::start(paths, 1).unwrap();
    match ahead.take(0) {
        Ahead::Opened(mut file) => {
            let mut some = [0; 100];
            file.read_exact(&mut some).unwrap();
            assert_eq!(&some[..], &content(0, 100)[..]);
        }
        other => panic!("{other:?}"),
    }
    match ahead.take(1) {
        Ahead::Opened(mut file) => {
            let mut read = Vec::new();
            file.read_to_end(&mut read).unwrap();
            assert!(read == content(1, len), "input 1: other bytes");
        }
        other => panic!("{other:?}"),
    }
    // Input 2's helper fills its chunks and waits.
    for _ in 0..200 {
        let state = lock(&ahead.shared.state);
        if state
            .chunks
            .get(&2)
            .is_some_and(|c| c.queue.len() == CHUNKS_AHEAD)
        {
            break;
        }
        drop(state);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(
        lock(&ahead.shared.state)
            .chunks
            .get(&2)
            .map(|c| c.queue.len()),
        Some(CHUNKS_AHEAD)
    );
    drop(ahead);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A helper that panics leaves its input to the framing thread
/// (`Skipped`, opened where it is framed), or ends the chunks it was
/// reading with an error; the inputs after it are still read ahead by
/// the other helper, or left to the framing thread when none is left.
#[test]
fn a_helper_that_panics_leaves_its_input_to_the_framing_thread() {
    let dir = scratch("panic");
    let big = 3 * CHUNK_BYTES;
    let files = [
        ("a.fb", 100),
        ("panic-taken.fb", 100),
        ("b.fb", 100),
        ("panic-reading-on.fb", big),
        ("c.fb", 100),
    ];
    let paths: Vec<Option<PathBuf>> = files
        .iter()
        .enumerate()
        .map(|(i, (name, len))| {
            let path = dir.join(name);
            std::fs::write(&path, content(i, *len)).unwrap();
            Some(path)
        })
        .collect();
    for helpers in [1, 2] {
        let ahead = ReadAhead::start(paths.clone(), helpers).unwrap();
        let mut got = Vec::new();
        for (i, (_, len)) in files.iter().enumerate() {
            got.push(match ahead.take(i) {
                Ahead::Opened(mut file) => {
                    let mut read = Vec::new();
                    match file.read_to_end(&mut read) {
                        Ok(_) if read == content(i, *len) => "whole",
                        Ok(_) => "other bytes",
                        Err(_) => "failed",
                    }
                }
                Ahead::Skipped => "skipped",
                Ahead::Failed(_) => "not opened",
            });
        }
        drop(ahead);
        assert_eq!(got[0], "whole", "{helpers} helpers: {got:?}");
        assert_eq!(got[1], "skipped", "{helpers} helpers: {got:?}");
        if helpers == 2 {
            assert_eq!(got[2], "whole", "{got:?}");
            assert_eq!(got[3], "failed", "{got:?}");
        }
        // One helper: none is left after the first panic.
        if helpers == 1 {
            assert_eq!(&got[2..], ["skipped"; 3], "{got:?}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
