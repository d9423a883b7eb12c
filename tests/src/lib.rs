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

/// One corruption of `buf`: a flipped bit, a random byte, a random
/// little-endian u16 below 64 or u32 below the length (offsets and vtable
/// entries), or a cut. The verifier and skim tests walk the corpus with
/// these.
pub fn corrupt(buf: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = buf.to_vec();
    if out.is_empty() {
        return out;
    }
    let at = rng.below(out.len());
    let mut put = |bytes: &[u8]| {
        for (k, b) in bytes.iter().enumerate() {
            if let Some(slot) = out.get_mut(at + k) {
                *slot = *b;
            }
        }
    };
    match rng.below(5) {
        0 => {
            let bit = 1u8 << rng.below(8);
            let flipped = buf[at] ^ bit;
            put(&[flipped]);
        }
        1 => put(&[rng.next() as u8]),
        2 => put(&((rng.next() as u16) % 64).to_le_bytes()),
        3 => put(&(rng.below(buf.len() + 16) as u32).to_le_bytes()),
        _ => out.truncate(at),
    }
    out
}

/// An output that takes `room` bytes, then fails as a full disk does
/// (`ErrorKind::StorageFull`).
#[derive(Debug)]
pub struct FullAfter {
    /// Bytes it still takes.
    pub room: usize,
}

impl std::io::Write for FullAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every corpus log, valid and invalid (`invalid_joined_logs/`), as
/// (path under the data folder, bytes), in name order.
pub fn all_logs() -> Vec<(String, Vec<u8>)> {
    let mut logs: Vec<String> = valid_logs();
    let dir = data_dir().join("invalid_joined_logs");
    let mut invalid: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            format!(
                "invalid_joined_logs/{}",
                e.unwrap().file_name().to_string_lossy()
            )
        })
        .collect();
    invalid.sort();
    logs.extend(invalid);
    logs.into_iter()
        .map(|rel| {
            let bytes = read(&rel);
            (rel, bytes)
        })
        .collect()
}
