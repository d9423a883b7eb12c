//! Arrays of probabilities written lately, with their text.
//!
//! A loop's explorer gives the same few probability vectors to decision
//! after decision (`[0.5,0.5]` in the corpus's CB log; in a CCB log each
//! slot's `[0.85,0.05,0.05,0.05]` and its permutations), and each float of
//! them was looked up in the float texts' cache one by one, some sixty
//! instructions a float. The whole array's text is found by its bits at
//! once instead.
//!
//! Where arrays do not repeat, the lookups and the copy into the table
//! would cost without paying: hits are counted, and the table rests for a
//! while when fewer than a quarter of the lookups hit (`caches.rs`).

use crate::caches::MemoRate;
use crate::put::{Cursor, Put};

/// Entries of the table (a power of two).
const ENTRIES: usize = 16;
/// The most floats an array kept holds.
const FLOATS: usize = 8;
/// Room for an array's text: eight floats of up to 24 characters, their
/// commas and brackets.
const TEXT: usize = 224;

#[derive(Clone)]
struct Entry {
    /// Floats in the array; 0 for an empty entry.
    count: usize,
    bits: [u32; FLOATS],
    len: usize,
    text: [u8; TEXT],
}

/// The table, and how often it pays.
#[derive(Clone)]
pub(super) struct ProbabilityArrayCache {
    entries: Box<[Entry]>,
    rate: MemoRate,
}

impl std::fmt::Debug for ProbabilityArrayCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbabilityArrayCache")
            .finish_non_exhaustive()
    }
}

/// No table: every lookup is skipped (for a line written alone).
impl Default for ProbabilityArrayCache {
    fn default() -> Self {
        Self {
            entries: Box::new([]),
            rate: MemoRate::default(),
        }
    }
}

impl ProbabilityArrayCache {
    /// A table of [`ENTRIES`] arrays, allocated here once (4.3 KiB).
    pub(super) fn new() -> Self {
        let empty = Entry {
            count: 0,
            bits: [0; FLOATS],
            len: 0,
            text: [0; TEXT],
        };
        Self {
            entries: vec![empty; ENTRIES].into_boxed_slice(),
            rate: MemoRate::default(),
        }
    }
}

impl ProbabilityArrayCache {
    /// Arrays written from the table since it was made.
    pub(super) fn hits(&self) -> u64 {
        self.rate.totals().1
    }
}

/// Where an array's text is, or is to go.
pub(super) enum Found {
    /// Not looked up: resting, or too long an array.
    Skipped,
    /// Written from the table.
    Written,
    /// Not held: write it with [`ProbabilityArrayCache::keep`] into this entry.
    Missing(usize),
}

impl ProbabilityArrayCache {
    /// Writes the text of `values` to `out` if the table holds it.
    #[inline(always)]
    pub(super) fn put<P: Put>(&mut self, out: &mut P, values: &[f32]) -> Found {
        if self.rate.rests() {
            return Found::Skipped;
        }
        if values.is_empty() || values.len() > FLOATS || self.entries.is_empty() {
            return Found::Skipped;
        }
        let mut bits = [0u32; FLOATS];
        for (b, v) in bits.iter_mut().zip(values) {
            *b = v.to_bits();
        }
        let at = entry_of(&bits);
        let hit = match self.entries.get(at) {
            Some(e) if e.count == values.len() && e.bits == bits => {
                // A copy of known size is a few moves; the whole room
                // would be fourteen of them for the usual short text.
                match e.text.first_chunk::<48>() {
                    Some(head) if e.len <= 48 => out.put_first(head, e.len),
                    _ => out.put(e.text.get(..e.len).unwrap_or_default()),
                }
                true
            }
            _ => false,
        };
        self.rate.count(hit);
        if hit {
            Found::Written
        } else {
            Found::Missing(at)
        }
    }

    /// Writes `values` with `write` into entry `at` (found
    /// [`Found::Missing`]), keeps it there and copies it to `out`; false,
    /// with nothing written to `out` and nothing kept, where the text does
    /// not fit (the caller then writes it itself).
    pub(super) fn keep<P: Put>(
        &mut self,
        out: &mut P,
        at: usize,
        values: &[f32],
        write: impl FnOnce(&mut Cursor<'_>),
    ) -> bool {
        let Some(e) = self.entries.get_mut(at) else {
            return false;
        };
        e.count = 0;
        let mut cursor = Cursor::new(&mut e.text);
        write(&mut cursor);
        let len = cursor.len();
        let Some(text) = e.text.get(..len) else {
            return false;
        };
        out.put(text);
        e.len = len;
        e.count = values.len();
        e.bits = [0; FLOATS];
        for (b, v) in e.bits.iter_mut().zip(values) {
            *b = v.to_bits();
        }
        true
    }
}

/// The entry for an array of these bits (unused ones 0): a folded
/// multiply of the words mixed, where every bit reaches the index.
#[inline(always)]
fn entry_of(bits: &[u32; FLOATS]) -> usize {
    let mut mixed = 0u64;
    for (i, b) in bits.iter().enumerate() {
        mixed ^= u64::from(*b).rotate_left(i as u32 * 13);
    }
    let full = u128::from(mixed) * 0x9E37_79B9_7F4A_7C15;
    ((full >> 64) as u64 ^ full as u64) as usize % ENTRIES
}

#[cfg(test)]
mod tests {
    use super::*;
    const SAMPLE: u32 = MemoRate::SAMPLE;

    fn text(values: &[f32]) -> String {
        values
            .iter()
            .map(|v| format!("{v:?}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Writes `values` through the table, as the DSJSON writer does.
    fn write(
        arrays: &mut ProbabilityArrayCache,
        out: &mut Vec<u8>,
        values: &[f32],
    ) -> &'static str {
        match arrays.put(out, values) {
            Found::Written => "written",
            Found::Skipped => {
                out.extend_from_slice(text(values).as_bytes());
                "skipped"
            }
            Found::Missing(at) => {
                let t = text(values);
                if !arrays.keep(out, at, values, |c| c.put(t.as_bytes())) {
                    out.extend_from_slice(t.as_bytes());
                }
                "missing"
            }
        }
    }

    #[test]
    fn arrays_met_again_are_written_as_first_written() {
        let cases: &[(&str, &[f32])] = &[
            ("one float", &[0.5]),
            ("two", &[0.5, 0.5]),
            ("a permutation", &[0.05, 0.85, 0.05, 0.05]),
            ("another", &[0.85, 0.05, 0.05, 0.05]),
            ("eight", &[0.125; 8]),
            (
                "a text longer than a short copy",
                &[0.849_999_96, 0.05, 0.05, 0.05],
            ),
            ("a prefix of another", &[0.85, 0.05]),
            ("negative zero", &[-0.0, 0.0]),
            ("zero", &[0.0, 0.0]),
        ];
        let mut arrays = ProbabilityArrayCache::new();
        for round in 0..3 {
            for (name, values) in cases {
                let mut out = Vec::new();
                let how = write(&mut arrays, &mut out, values);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    text(values),
                    "{name}, round {round}"
                );
                if round == 0 {
                    assert_eq!(how, "missing", "{name}: found before it was kept");
                }
            }
        }
    }

    #[test]
    fn too_long_an_array_is_not_looked_up_nor_kept() {
        let mut arrays = ProbabilityArrayCache::new();
        let mut out = Vec::new();
        assert_eq!(write(&mut arrays, &mut out, &[0.1; 9]), "skipped");
        assert_eq!(write(&mut arrays, &mut out, &[]), "skipped");
        // A text longer than the room is written, not kept.
        let mut out = Vec::new();
        let Found::Missing(at) = arrays.put(&mut out, &[0.25]) else {
            panic!("found, never kept");
        };
        let long = "x".repeat(TEXT + 1);
        assert!(!arrays.keep(&mut out, at, &[0.25], |c| c.put(long.as_bytes())));
        assert!(out.is_empty());
        assert!(matches!(arrays.put(&mut out, &[0.25]), Found::Missing(_)));
    }

    #[test]
    fn without_a_table_nothing_is_looked_up() {
        let mut arrays = ProbabilityArrayCache::default();
        let mut out = Vec::new();
        assert_eq!(write(&mut arrays, &mut out, &[0.5, 0.5]), "skipped");
        assert_eq!(write(&mut arrays, &mut out, &[0.5, 0.5]), "skipped");
    }

    #[test]
    fn the_table_rests_where_arrays_never_repeat() {
        let mut arrays = ProbabilityArrayCache::new();
        let mut out = Vec::new();
        for i in 0..SAMPLE {
            write(&mut arrays, &mut out, &[i as f32, 1.0]);
        }
        assert_eq!(write(&mut arrays, &mut out, &[0.0, 1.0]), "skipped");
    }
}
