//! The lengths of a DELTA_LENGTH_BYTE_ARRAY page, DELTA_BINARY_PACKED as
//! parquet-rs 59 packs 32-bit integers (`DeltaBitPackEncoder<Int32Type>`):
//! blocks of 128 deltas in 4 mini-blocks of 32, each block's smallest
//! delta subtracted and the rest bit-packed at each mini-block's width.
//! [`crate::text_chunk`] must write the bytes parquet-rs writes, so every
//! choice below is parquet-rs' (the Parquet format allows others), and
//! [`DeltaLengths::finished_bytes`] is its `estimated_data_encoded_size`,
//! which decides where a page ends.

/// Values per block and per mini-block (parquet-rs' for INT32).
const BLOCK: usize = 128;
const MINI_BLOCKS: usize = 4;
const MINI_BLOCK: usize = BLOCK / MINI_BLOCKS;

/// One page's lengths being packed.
pub(crate) struct DeltaLengths {
    /// The blocks finished so far.
    blocks: Vec<u8>,
    /// The deltas of the block in progress; the first `in_block` count.
    deltas: [i64; BLOCK],
    in_block: usize,
    /// Lengths put since the page began, the first included.
    count: usize,
    first: i32,
    last: i32,
}

impl DeltaLengths {
    pub(crate) fn new() -> Self {
        Self {
            blocks: Vec::new(),
            deltas: [0; BLOCK],
            in_block: 0,
            count: 0,
            first: 0,
            last: 0,
        }
    }

    /// Adds one length.
    pub(crate) fn put(&mut self, length: i32) {
        if self.count == 0 {
            self.first = length;
        } else {
            // parquet-rs takes the difference in 32 bits, wrapping, then
            // widens it.
            let delta = i64::from(length.wrapping_sub(self.last));
            if let Some(slot) = self.deltas.get_mut(self.in_block) {
                *slot = delta;
            }
            self.in_block += 1;
            if self.in_block == BLOCK {
                self.finish_block();
            }
        }
        self.last = length;
        self.count += 1;
    }

    /// Bytes of the blocks finished so far: what parquet-rs counts as the
    /// encoded size while a page fills (neither the header nor the block
    /// in progress).
    pub(crate) fn finished_bytes(&self) -> usize {
        self.blocks.len()
    }

    /// Appends the page's lengths (header, then blocks) to `out` and
    /// starts over for the next page.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        self.finish_block();
        put_vlq(out, BLOCK as u64);
        put_vlq(out, MINI_BLOCKS as u64);
        put_vlq(out, self.count as u64);
        put_zigzag(out, i64::from(self.first));
        out.extend_from_slice(&self.blocks);
        self.blocks.clear();
        self.in_block = 0;
        self.count = 0;
        self.first = 0;
        self.last = 0;
    }

    /// Packs the deltas of the block in progress, if any.
    fn finish_block(&mut self) {
        let deltas = self.deltas.get(..self.in_block).unwrap_or(&[]);
        let Some(min) = deltas.iter().copied().min() else {
            return;
        };
        put_zigzag(&mut self.blocks, min);
        let widths_at = self.blocks.len();
        // Widths of mini-blocks with no values stay 0 (parquet-rs pads
        // with 0 outside its own tests).
        self.blocks.extend_from_slice(&[0; MINI_BLOCKS]);
        for (i, mini) in deltas.chunks(MINI_BLOCK).enumerate() {
            let above_min = |d: i64| u64::from((d as i32).wrapping_sub(min as i32) as u32);
            let widest = mini.iter().map(|&d| above_min(d)).max().unwrap_or(0);
            let width = 64 - widest.leading_zeros();
            if let Some(w) = self.blocks.get_mut(widths_at + i) {
                *w = width as u8;
            }
            // A short last mini-block is padded with zeros to its full
            // 32 values.
            let mut packer = BitPacker::default();
            for j in 0..MINI_BLOCK {
                let value = mini.get(j).map_or(0, |&d| above_min(d));
                packer.put(&mut self.blocks, value, width);
            }
            packer.flush(&mut self.blocks);
        }
        self.in_block = 0;
    }
}

/// Values packed least significant bit first, as parquet's bit writer.
#[derive(Default)]
struct BitPacker {
    word: u64,
    bits: u32,
}

impl BitPacker {
    fn put(&mut self, out: &mut Vec<u8>, value: u64, width: u32) {
        if width == 0 {
            return;
        }
        self.word |= value << self.bits;
        self.bits += width;
        if self.bits >= 64 {
            out.extend_from_slice(&self.word.to_le_bytes());
            self.bits -= 64;
            self.word = value.checked_shr(width - self.bits).unwrap_or(0);
        }
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        let bytes = self.bits.div_ceil(8) as usize;
        out.extend_from_slice(self.word.to_le_bytes().get(..bytes).unwrap_or(&[]));
        self.word = 0;
        self.bits = 0;
    }
}

fn put_vlq(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v & 0x7F) as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_zigzag(out: &mut Vec<u8>, v: i64) {
    put_vlq(out, ((v << 1) ^ (v >> 63)) as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a page's lengths as the Parquet format defines them (not as
    /// parquet-rs writes them): what any reader gets back.
    fn decode(bytes: &[u8]) -> Vec<i32> {
        fn vlq(bytes: &[u8], at: &mut usize) -> u64 {
            let mut v = 0u64;
            let mut shift = 0;
            loop {
                let b = bytes[*at];
                *at += 1;
                v |= u64::from(b & 0x7F) << shift;
                shift += 7;
                if b < 0x80 {
                    return v;
                }
            }
        }
        let unzigzag = |z: u64| (z >> 1) as i64 ^ -((z & 1) as i64);
        let mut at = 0;
        let block = vlq(bytes, &mut at) as usize;
        let minis = vlq(bytes, &mut at) as usize;
        let total = vlq(bytes, &mut at) as usize;
        let first = unzigzag(vlq(bytes, &mut at)) as i32;
        let mut out = vec![first];
        let per_mini = block / minis;
        while out.len() < total {
            let min = unzigzag(vlq(bytes, &mut at));
            let widths: Vec<usize> = bytes[at..at + minis].iter().map(|&w| w as usize).collect();
            at += minis;
            for width in widths {
                if out.len() >= total {
                    break;
                }
                for i in 0..per_mini {
                    let mut v = 0u64;
                    for k in 0..width {
                        let b = i * width + k;
                        v |= u64::from((bytes[at + b / 8] >> (b % 8)) & 1) << k;
                    }
                    if out.len() < total {
                        let prev = *out.last().unwrap_or(&0);
                        let delta = (min as i32).wrapping_add(v as u32 as i32);
                        out.push(prev.wrapping_add(delta));
                    }
                }
                at += per_mini * width / 8;
            }
        }
        assert_eq!(at, bytes.len(), "bytes left after {total} values");
        out
    }

    /// Each case: lengths that read back as they went in, and the size
    /// counted while the page fills (whole blocks only).
    #[test]
    fn lengths_read_back_in_every_shape() {
        let cases: Vec<(&str, Vec<i32>)> = vec![
            ("one value", vec![7]),
            ("all equal", vec![500; 300]),
            ("one short block", (0..100).collect()),
            ("exactly one block and the first", (0..=128).collect()),
            (
                "three blocks and a bit",
                (0..400).map(|i| (i * 37) % 1000).collect(),
            ),
            ("falling", (0..200).rev().collect()),
            ("widest deltas", vec![0, i32::MAX, 0, i32::MAX, 1, 0]),
            ("zeros", vec![0; 129]),
        ];
        for (name, lengths) in cases {
            let mut enc = DeltaLengths::new();
            for &l in &lengths {
                enc.put(l);
            }
            let whole_blocks = (lengths.len().saturating_sub(1)) / BLOCK;
            assert_eq!(enc.finished_bytes() > 0, whole_blocks > 0, "{name}");
            let mut out = Vec::new();
            enc.finish(&mut out);
            assert_eq!(decode(&out), lengths, "{name}");
            // Starts over: the next page alone.
            enc.put(3);
            let mut again = Vec::new();
            enc.finish(&mut again);
            assert_eq!(decode(&again), vec![3], "{name}: next page");
        }
    }
}
