//! An output's bytes are what was written, in order, whatever the sizes
//! of the writes: small ones gathered in its buffer, large ones straight
//! through after what the buffer holds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::Write;

use fb_run::output::{Compress, Existing, How, Output};

/// `n` bytes that tell where each write started (its index) and where in
/// the write a byte is.
fn chunk(index: usize, n: usize) -> Vec<u8> {
    (0..n).map(|i| (index * 31 + i % 251) as u8).collect()
}

#[test]
fn writes_of_every_size_land_in_order() {
    let k = 1 << 10;
    let cases: [(&str, &[usize]); 6] = [
        ("small ones", &[10, 20, 4 * k, 30]),
        ("large after small", &[100, 200 * k, 5, 300 * k]),
        ("a large one first", &[64 * k, 1, 64 * k - 1, 3]),
        (
            "around the straight-through size",
            &[64 * k - 1, 64 * k, 64 * k + 1, 7],
        ),
        ("past the buffer", &[300 * k, 1, 256 * k, 2, 256 * k + 1]),
        (
            "a folder's last chunks",
            &[200 * k, 190 * k, 210 * k, 150 * k],
        ),
    ];
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fb-output-writes");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (case, sizes) in cases {
        let path = dir.join("out.json");
        let how = How::text(Compress::Never, Existing::Replace);
        let mut out = Output::create(Some(&path), &[], how).unwrap();
        let mut expected = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            let bytes = chunk(i, n);
            out.write_all(&bytes).unwrap();
            expected.extend_from_slice(&bytes);
        }
        out.finish().unwrap();
        let got = std::fs::read(&path).unwrap();
        assert_eq!(got.len(), expected.len(), "{case}");
        assert!(got == expected, "{case}: bytes differ");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
