//! zstd payloads decompressed lately, served again when the same bytes
//! come back.
//!
//! A loop logs many payloads that are byte for byte the same: the outcome
//! of each click of the same value, the `DedupInfo` of the same set of
//! actions. zstd compresses alike bytes alike, so their frames repeat too.
//! Decompressing a frame of a few hundred bytes is mostly reading its
//! entropy tables (Huffman and FSE), about a microsecond, where finding
//! the same frame among the last ones and comparing it costs a few dozen
//! nanoseconds. A frame is only ever decompressed into what the same bytes
//! gave before, so what is served is what decompressing would have given.
//!
//! Where frames of a payload kind do not repeat (decisions, whose contexts
//! differ), the lookups would cost without paying: each kind counts its
//! hits, and rests (neither looks up nor keeps its frames) for a while when
//! fewer than one in [`POOR`] hit.

use crate::hit_rate::DecoderRate;

/// Slots of the table, each holding one frame (a power of two).
const SLOTS: usize = 64;
/// The largest frame kept, and the most it may decompress to. The table is
/// one zeroed allocation of room for both in every slot (2.3 MiB of
/// address space, made on the first compressed payload); only the pages
/// frames are written to are ever touched, so in a log of small repeated
/// payloads it holds a few dozen KiB of memory. Fixed room also means
/// nothing grows, or allocates, once the table is made.
pub(crate) const RAW_MAX: usize = 4 << 10;
pub(crate) const OUT_MAX: usize = 32 << 10;
const STRIDE: usize = RAW_MAX + OUT_MAX;
/// A kind whose frames hit fewer than one lookup in this many rests for a
/// while (`hit_rate.rs`).
const POOR: u32 = 16;

/// The table of frames, and each payload kind's rate.
#[derive(Default)]
pub(crate) struct ZstdFrameCache {
    /// Slot `i`'s frame at `i * STRIDE`, what it decompressed to
    /// `RAW_MAX` bytes further.
    arena: Vec<u8>,
    /// Each slot's frame and decompressed lengths; a frame of length 0:
    /// nothing held.
    lens: Vec<(u16, u16)>,
    rates: [DecoderRate<POOR>; 16],
    hits: u64,
    misses: u64,
}

impl std::fmt::Debug for ZstdFrameCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZstdFrameCache")
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .finish_non_exhaustive()
    }
}

/// Where a frame is, or is to go.
pub(crate) enum Lookup {
    /// Not looked up: the kind rests, or the frame is too large to keep.
    Skipped,
    /// Held in this slot: serve its bytes ([`ZstdFrameCache::served`]).
    Found(usize),
    /// Not held: decompress it into this slot ([`ZstdFrameCache::out`]), and say
    /// so with [`ZstdFrameCache::keep`].
    Missing(usize),
}

impl ZstdFrameCache {
    /// A cache that looks nothing up and keeps nothing (its table is
    /// never made): every frame is decompressed.
    pub(crate) fn off() -> Self {
        Self {
            rates: [DecoderRate::off(); 16],
            ..Self::default()
        }
    }

    /// Looks `raw`, a frame of payload kind `kind`, up.
    pub(crate) fn lookup(&mut self, kind: u8, raw: &[u8]) -> Lookup {
        let Some(rate) = self.rates.get_mut(usize::from(kind & 15)) else {
            return Lookup::Skipped;
        };
        if rate.rests() {
            return Lookup::Skipped;
        }
        if raw.len() > RAW_MAX || raw.is_empty() {
            return Lookup::Skipped;
        }
        if self.lens.is_empty() {
            self.arena = vec![0; SLOTS * STRIDE];
            self.lens = vec![(0, 0); SLOTS];
        }
        let at = slot_of(raw);
        let hit = self.frame(at) == raw;
        if let Some(rate) = self.rates.get_mut(usize::from(kind & 15)) {
            rate.count(hit);
        }
        if hit {
            self.hits += 1;
            Lookup::Found(at)
        } else {
            self.misses += 1;
            Lookup::Missing(at)
        }
    }

    /// The frame slot `at` holds (empty for none).
    fn frame(&self, at: usize) -> &[u8] {
        let len = self.lens.get(at).map_or(0, |l| usize::from(l.0));
        self.arena
            .get(at * STRIDE..at * STRIDE + len)
            .unwrap_or_default()
    }

    /// What the frame in slot `at` decompressed to.
    pub(crate) fn served(&self, at: usize) -> &[u8] {
        let start = at * STRIDE + RAW_MAX;
        let len = self.lens.get(at).map_or(0, |l| usize::from(l.1));
        self.arena.get(start..start + len).unwrap_or_default()
    }

    /// Slot `at`'s room for a decompressed frame, [`OUT_MAX`] bytes; the
    /// slot holds no frame until [`ZstdFrameCache::keep`] says which.
    pub(crate) fn out(&mut self, at: usize) -> Option<&mut [u8]> {
        *self.lens.get_mut(at)? = (0, 0);
        let start = at * STRIDE + RAW_MAX;
        self.arena.get_mut(start..start + OUT_MAX)
    }

    /// Slot `at` now holds `raw`, which decompressed to the first `n`
    /// bytes of its room; returns them.
    pub(crate) fn keep(&mut self, at: usize, raw: &[u8], n: usize) -> &[u8] {
        let start = at * STRIDE;
        if let (Some(room), Some(lens), Ok(raw_len), Ok(out_len)) = (
            self.arena.get_mut(start..start + raw.len().min(RAW_MAX)),
            self.lens.get_mut(at),
            u16::try_from(raw.len()),
            u16::try_from(n.min(OUT_MAX)),
        ) {
            if room.len() == raw.len() {
                room.copy_from_slice(raw);
                *lens = (raw_len, out_len);
            }
        }
        self.served(at)
    }

    /// Frames served from the table, and frames looked up and not found.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}

/// The slot of a frame: from its length and its first and last eight
/// bytes (a frame's header, and the end of its data or its checksum).
fn slot_of(raw: &[u8]) -> usize {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let word = |b: Option<&[u8; 8]>| b.map_or(0, |b| u64::from_le_bytes(*b));
    let (first, last) = (word(raw.first_chunk()), word(raw.last_chunk()));
    let h = (raw.len() as u64 ^ first.wrapping_mul(K) ^ last.rotate_left(29)).wrapping_mul(K);
    (h >> (64 - SLOTS.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    const SAMPLE: u32 = DecoderRate::<POOR>::SAMPLE;
    const REST: u32 = DecoderRate::<POOR>::REST;

    /// A kind's lookups stop after a sample without hits, and start again
    /// after the rest.
    #[test]
    fn a_kind_whose_frames_never_repeat_rests() {
        let mut cache = ZstdFrameCache::default();
        let frame = |i: u32| i.to_le_bytes().repeat(4);
        let mut looked = 0;
        for i in 0..SAMPLE + REST {
            if !matches!(cache.lookup(0, &frame(i)), Lookup::Skipped) {
                looked += 1;
            }
        }
        assert_eq!(looked, SAMPLE);
        assert!(matches!(cache.lookup(0, &frame(0)), Lookup::Missing(_)));
        // Another kind was not rested.
        assert!(matches!(cache.lookup(1, &frame(0)), Lookup::Missing(_)));
    }

    #[test]
    fn a_kind_whose_frames_repeat_does_not_rest() {
        let mut cache = ZstdFrameCache::default();
        // One lookup in eight hits: above the poor rate.
        for i in 0..4 * SAMPLE {
            let raw = if i % 8 == 0 {
                b"the same frame".to_vec()
            } else {
                i.to_le_bytes().repeat(3)
            };
            match cache.lookup(3, &raw) {
                Lookup::Skipped => panic!("rested at lookup {i}"),
                Lookup::Found(_) => {}
                Lookup::Missing(at) => {
                    if let Some(out) = cache.out(at) {
                        out[..raw.len()].copy_from_slice(&raw);
                    }
                    assert_eq!(cache.keep(at, &raw, raw.len()), raw);
                }
            }
        }
        assert!(cache.counts().0 > 0);
    }

    /// A frame whose decompression failed (its slot emptied by `out`, never
    /// `keep`) is not found: it fails again, rather than serving what
    /// was half written.
    #[test]
    fn only_kept_frames_are_found() {
        let mut cache = ZstdFrameCache::default();
        let raw = b"frame".as_slice();
        let Lookup::Missing(at) = cache.lookup(5, raw) else {
            panic!("an empty table found a frame");
        };
        if let Some(out) = cache.out(at) {
            out[..4].copy_from_slice(b"half");
        }
        assert!(matches!(cache.lookup(5, raw), Lookup::Missing(_)));
        if let Some(out) = cache.out(at) {
            out[..5].copy_from_slice(b"whole");
        }
        assert_eq!(cache.keep(at, raw, 5), b"whole");
        assert!(matches!(cache.lookup(5, raw), Lookup::Found(a) if a == at));
        assert_eq!(cache.served(at), b"whole");
        // A frame of the same slot but other bytes is not this one.
        let Some(other) = (0u64..1 << 20)
            .map(|i| i.to_le_bytes().repeat(2))
            .find(|b| slot_of(b) == at)
        else {
            panic!("no frame of slot {at}");
        };
        assert!(matches!(cache.lookup(5, &other), Lookup::Missing(_)));
    }

    #[test]
    fn a_cache_made_off_looks_nothing_up() {
        let mut cache = ZstdFrameCache::off();
        for kind in 0..16 {
            for _ in 0..2 * SAMPLE + REST {
                assert!(matches!(cache.lookup(kind, b"frame"), Lookup::Skipped));
            }
        }
        assert!(cache.lens.is_empty(), "the table was made");
        assert_eq!(cache.counts(), (0, 0));
    }

    #[test]
    fn a_frame_too_large_to_keep_is_not_looked_up() {
        let mut cache = ZstdFrameCache::default();
        assert!(matches!(
            cache.lookup(0, &vec![7; RAW_MAX + 1]),
            Lookup::Skipped
        ));
        assert!(matches!(
            cache.lookup(0, &vec![7; RAW_MAX]),
            Lookup::Missing(_)
        ));
    }
}
