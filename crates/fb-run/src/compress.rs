//! Compressed output in independent pieces, packed on several threads.
//!
//! The uncompressed stream is cut every [`PIECE`] bytes, wherever the
//! writes fall, and each piece becomes a gzip member or a zstd frame of its
//! own, written in order. Decompressors read concatenated members (RFC
//! 1952 §2.2: zcat, Python's `gzip`, zlib's `gzread` in VW) and frames (RFC
//! 8878 §3: `zstd -d`, every libzstd stream decoder) as one stream, so the
//! file decompresses to exactly the bytes written. Pieces depend only on
//! those bytes, not on the threads, so the compressed file is also the same
//! for any `--threads`.
//!
//! With one thread a piece is packed where it is cut; with more, packers
//! on `fb_join`'s ordered pool take pieces from a queue and the writer
//! gets their results in order, at most two pieces per thread in flight,
//! so memory stays flat when the output is slower than the input.

use std::io::{self, Write};

use fb_join::ordered::Ordered;

/// Uncompressed bytes per piece. A megabyte costs zstd level 1 nothing in
/// ratio on DSJSON (it did better than one level-3 stream on the bench
/// log: 11.7x against 11.4x), and gzip's window is 32 KiB anyway.
pub const PIECE: usize = 1 << 20;

/// What pieces become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// Gzip members at this deflate level (1 to 9).
    Gzip(u32),
    /// Zstd frames at this level (negative levels are zstd's fast ones),
    /// each with a checksum.
    Zstd(i32),
}

impl Codec {
    /// Checks a level for this codec.
    pub fn with_level(self, level: i32) -> Result<Self, String> {
        match self {
            Codec::Gzip(_) if (1..=9).contains(&level) => Ok(Codec::Gzip(level as u32)),
            Codec::Zstd(_) if (-7..=19).contains(&level) && level != 0 => Ok(Codec::Zstd(level)),
            Codec::Gzip(_) => Err(format!("gzip levels are 1 to 9, not {level}")),
            Codec::Zstd(_) => Err(format!("zstd levels are -7 to -1 and 1 to 19, not {level}")),
        }
    }
}

/// Packs one piece at a time; one per thread.
enum Packer {
    Gzip(flate2::Compress),
    Zstd(Box<zstd::bulk::Compressor<'static>>),
}

/// A gzip member's header: deflate, no name, no time (so that the same
/// input gives the same file), unknown OS.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];

impl Packer {
    fn new(codec: Codec) -> io::Result<Self> {
        Ok(match codec {
            Codec::Gzip(level) => Packer::Gzip(flate2::Compress::new(
                flate2::Compression::new(level),
                false,
            )),
            Codec::Zstd(level) => {
                let mut z = zstd::bulk::Compressor::new(level)?;
                z.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
                Packer::Zstd(Box::new(z))
            }
        })
    }

    /// `piece` compressed into `out`, which it replaces.
    fn pack(&mut self, piece: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        out.clear();
        match self {
            Packer::Zstd(z) => {
                out.reserve(zstd::zstd_safe::compress_bound(piece.len()));
                z.compress_to_buffer(piece, out)?;
            }
            Packer::Gzip(deflate) => {
                out.extend_from_slice(&GZIP_HEADER);
                deflate.reset();
                let start = deflate.total_in();
                loop {
                    let done = (deflate.total_in() - start) as usize;
                    // Deflate's worst case is a few bytes per 16 KiB block.
                    out.reserve(piece.len() - done + piece.len() / 1000 + 64);
                    let rest = piece.get(done..).unwrap_or_default();
                    let status = deflate
                        .compress_vec(rest, out, flate2::FlushCompress::Finish)
                        .map_err(io::Error::other)?;
                    if status == flate2::Status::StreamEnd {
                        break;
                    }
                }
                let mut crc = flate2::Crc::new();
                crc.update(piece);
                out.extend_from_slice(&crc.sum().to_le_bytes());
                // ISIZE: the length modulo 2^32 (a piece is far smaller).
                out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
            }
        }
        Ok(())
    }
}

/// A piece to pack, and the buffer its result goes in.
type Job = (Vec<u8>, Vec<u8>);

/// A packed piece, with both buffers to reuse.
struct Packed {
    piece: Vec<u8>,
    packed: Vec<u8>,
    result: io::Result<()>,
}

/// The packing threads, on the ordered pool: pieces come back in the
/// order they were cut.
struct Pool {
    packers: Ordered<'static, Job, Packed>,
    /// Buffers back from written pieces: (piece, packed).
    free: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Pool {
    fn start(codec: Codec, threads: usize) -> io::Result<Self> {
        let packers = (0..threads)
            .map(|_| Packer::new(codec))
            .collect::<io::Result<Vec<_>>>()?;
        let workers = packers.into_iter().map(|mut packer| {
            move |(piece, mut packed): Job| {
                let result = packer.pack(&piece, &mut packed);
                Packed {
                    piece,
                    packed,
                    result,
                }
            }
        });
        Ok(Self {
            packers: Ordered::owned("fb-pack", 2 * threads, workers)?,
            free: Vec::new(),
        })
    }

    /// Sends `piece` to be packed, and gives back an empty buffer for the
    /// next one; writes what is ready, waiting while too much is in flight.
    fn send<W: Write>(&mut self, piece: Vec<u8>, out: &mut W) -> io::Result<Vec<u8>> {
        let free = &mut self.free;
        self.packers.make_room(&mut |p| put(p, out, free))?;
        let (next, packed) = free
            .pop()
            .unwrap_or_else(|| (Vec::with_capacity(PIECE), Vec::new()));
        self.packers
            .submit((piece, packed), |p| put(p, out, free))?;
        Ok(next)
    }

    /// Waits for every piece in flight and writes it.
    fn drain<W: Write>(self, out: &mut W) -> io::Result<()> {
        let Self { packers, mut free } = self;
        packers.finish(|p| put(p, out, &mut free))
    }
}

/// Writes a packed piece to `out`, and keeps its buffers in `free`.
fn put<W: Write>(p: Packed, out: &mut W, free: &mut Vec<(Vec<u8>, Vec<u8>)>) -> io::Result<()> {
    p.result?;
    out.write_all(&p.packed)?;
    let mut piece = p.piece;
    piece.clear();
    free.push((piece, p.packed));
    Ok(())
}

/// A writer that compresses into `W` in independent pieces (see the
/// module's doc). [`Pieces::finish`] writes the last piece; dropped
/// unfinished, the output lacks it.
pub struct Pieces<W: Write> {
    out: W,
    piece: Vec<u8>,
    /// One thread: the packer and its buffer.
    inline: Option<(Packer, Vec<u8>)>,
    pool: Option<Pool>,
    /// Pieces sent or packed so far.
    pieces: u64,
}

impl<W: Write> Pieces<W> {
    /// Compresses with `codec` into `out`, on `threads` threads (1: on the
    /// writing thread itself).
    pub fn new(out: W, codec: Codec, threads: usize) -> io::Result<Self> {
        let (inline, pool) = match threads {
            0 | 1 => (Some((Packer::new(codec)?, Vec::new())), None),
            n => (None, Some(Pool::start(codec, n)?)),
        };
        Ok(Self {
            out,
            piece: Vec::with_capacity(PIECE),
            inline,
            pool,
            pieces: 0,
        })
    }

    /// Packs the piece so far.
    fn ship(&mut self) -> io::Result<()> {
        self.pieces += 1;
        if let Some((packer, packed)) = &mut self.inline {
            packer.pack(&self.piece, packed)?;
            self.out.write_all(packed)?;
            self.piece.clear();
            return Ok(());
        }
        let Some(pool) = &mut self.pool else {
            return Err(io::Error::other("no packer"));
        };
        let piece = std::mem::take(&mut self.piece);
        self.piece = pool.send(piece, &mut self.out)?;
        Ok(())
    }

    /// Packs and writes the last piece (an empty one when nothing was
    /// written, so that the file is a valid empty stream) and gives back
    /// the output, not flushed.
    pub fn finish(mut self) -> io::Result<W> {
        if !self.piece.is_empty() || self.pieces == 0 {
            self.ship()?;
        }
        if let Some(pool) = self.pool.take() {
            pool.drain(&mut self.out)?;
        }
        let Self { out, .. } = self;
        Ok(out)
    }

    /// The output under the compressor.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

impl<W: Write> Write for Pieces<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = PIECE - self.piece.len();
        let take = room.min(buf.len());
        self.piece
            .extend_from_slice(buf.get(..take).unwrap_or_default());
        if self.piece.len() >= PIECE {
            self.ship()?;
        }
        Ok(take)
    }

    /// Writes what is packed; a piece being filled waits for more bytes or
    /// [`Pieces::finish`], since cutting it here would make the file
    /// depend on when flushes happen.
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Text that compresses, in lines of varying length, `len` bytes.
    fn text(len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let mut i = 0u64;
        while out.len() < len {
            i += 1;
            let line = format!(
                "{{\"id\":\"{i:x}\",\"v\":{},\"pad\":\"{}\"}}\n",
                i * 7 % 13,
                "x".repeat((i % 50) as usize)
            );
            out.extend_from_slice(line.as_bytes());
        }
        out.truncate(len);
        out
    }

    fn compress(codec: Codec, threads: usize, data: &[u8], write: usize) -> Vec<u8> {
        let mut p = Pieces::new(Vec::new(), codec, threads).unwrap();
        for chunk in data.chunks(write.max(1)) {
            p.write_all(chunk).unwrap();
        }
        p.finish().unwrap()
    }

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    fn unzstd(bytes: &[u8]) -> Vec<u8> {
        zstd::stream::decode_all(bytes).unwrap()
    }

    #[test]
    fn round_trips_and_bytes_do_not_depend_on_threads_or_writes() {
        // (name, length): empty, one short piece, exactly one, several and
        // a tail.
        let cases = [
            ("empty", 0),
            ("short", 1000),
            ("one piece", PIECE),
            ("pieces and a tail", 3 * PIECE + 12_345),
        ];
        for (name, len) in cases {
            let data = text(len);
            for codec in [Codec::Gzip(1), Codec::Zstd(1), Codec::Zstd(-3)] {
                let one = compress(codec, 1, &data, 64 << 10);
                let back = match codec {
                    Codec::Gzip(_) => gunzip(&one),
                    Codec::Zstd(_) => unzstd(&one),
                };
                assert!(back == data, "{name} {codec:?}: round trip");
                assert!(
                    !one.is_empty(),
                    "{name} {codec:?}: an empty stream is still a stream"
                );
                for (threads, write) in [(2, 1 << 20), (3, 7777), (8, 3 * PIECE)] {
                    let many = compress(codec, threads, &data, write);
                    assert!(
                        many == one,
                        "{name} {codec:?}: {threads} threads, writes of {write}"
                    );
                }
            }
        }
    }

    #[test]
    fn pieces_are_members_and_frames_of_their_own() {
        let data = text(2 * PIECE + 10);
        let gz = compress(Codec::Gzip(1), 2, &data, 1 << 16);
        // A decoder of one member stops after the first piece.
        let mut first = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut first)
            .unwrap();
        assert_eq!(first.len(), PIECE);
        assert_eq!(gunzip(&gz), data);
        let zst = compress(Codec::Zstd(1), 2, &data, 1 << 16);
        let frames = {
            let mut n = 0;
            let mut rest = &zst[..];
            while !rest.is_empty() {
                let size = zstd::zstd_safe::find_frame_compressed_size(rest).unwrap();
                rest = &rest[size..];
                n += 1;
            }
            n
        };
        assert_eq!(frames, 3);
    }

    #[test]
    fn levels_are_checked() {
        assert_eq!(Codec::Gzip(1).with_level(9), Ok(Codec::Gzip(9)));
        assert!(Codec::Gzip(1).with_level(0).is_err());
        assert!(Codec::Gzip(1).with_level(10).is_err());
        assert_eq!(Codec::Zstd(1).with_level(-7), Ok(Codec::Zstd(-7)));
        assert!(Codec::Zstd(1).with_level(0).is_err());
        assert!(Codec::Zstd(1).with_level(20).is_err());
    }

    #[test]
    fn a_failing_output_is_an_error_not_a_hang() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let data = text(5 * PIECE);
        for threads in [1, 2] {
            let mut p = Pieces::new(Full, Codec::Zstd(1), threads).unwrap();
            let err = match p.write_all(&data) {
                Err(e) => e,
                Ok(()) => p.finish().err().expect("finish fails"),
            };
            assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{threads}");
        }
    }
}
