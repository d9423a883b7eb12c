//! Shared support for the tests of every crate: the vendored corpus in
//! `tests/data/` and a tiny deterministic PRNG (no `rand` needed).

// Test support: a panic here is a test failing, with its reason.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;

/// The vendored corpus folder (`tests/data`).
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Reads a corpus file by its path under `tests/data`.
pub fn read(rel: &str) -> Vec<u8> {
    let path = data_dir().join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every joined log of the corpus (the folders holding joined logs, not raw
/// client streams), as paths under `tests/data`, sorted per folder.
pub fn valid_logs() -> Vec<String> {
    let mut out = Vec::new();
    for dir in [
        "valid_joined_logs",
        "skip_learn/ca",
        "skip_learn/cb",
        "skip_learn/ccb",
        "skip_learn/slates",
    ] {
        let mut names: Vec<String> = std::fs::read_dir(data_dir().join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| n.ends_with(".fb") || n.ends_with(".log"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        names.sort();
        out.extend(names);
    }
    out
}

/// Every input a fuzz target's regression replay runs through the
/// target's harness: its seeds (`fuzz/seeds/<target>/*`), then the inputs
/// its runs found (`tests/data/fuzz/<target>/*`, README files apart), each
/// folder sorted. Panics when either folder is missing or holds no input,
/// so that a replay cannot pass having run nothing.
pub fn fuzz_inputs(target: &str) -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        root.join("../fuzz/seeds").join(target),
        data_dir().join("fuzz").join(target),
    ] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_none_or(|e| e != "md"))
            .collect();
        assert!(!paths.is_empty(), "no input in {}", dir.display());
        paths.sort();
        out.extend(paths);
    }
    out
}

/// xorshift64*: deterministic, seeded, good enough to pick corruptions.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}
