//! Properties of the framing core over arbitrary bytes: it never panics,
//! what it frames tiles the input from the start, and the slice and
//! stream readers agree whatever the read sizes, and the slice reader with
//! its caches (the prefetcher) on or off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_format::{Caches, Framer, SliceReader, StreamReader};
use proptest::prelude::*;

/// A reader that hands out at most `chunk` bytes per read.
struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// (kind, offset, index, len, payload) of every message, then the error's
/// offset if reading stopped on one.
type Framed = (Vec<Owned>, Option<u64>);

type Owned = (String, u64, u64, usize, Vec<u8>);

fn own(m: fb_format::Message<'_>) -> Owned {
    (
        m.kind.to_string(),
        m.offset,
        m.index,
        m.len,
        m.payload.to_vec(),
    )
}

/// Every message `next` gives, then where it failed if it did.
fn collect(mut next: impl FnMut() -> fb_format::Result<Option<Owned>>) -> Framed {
    let mut out = Vec::new();
    loop {
        match next() {
            Ok(Some(m)) => out.push(m),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.offset())),
        }
    }
}

fn slice_frames(bytes: &[u8], limit: u32, caches: Caches) -> Framed {
    let framer = Framer::with_max_payload(limit);
    let mut reader = SliceReader::with_framer(bytes, framer).with_caches(caches);
    collect(|| reader.next_message().map(|m| m.map(own)))
}

fn stream_frames(bytes: &[u8], limit: u32, chunk: usize) -> Framed {
    let trickle = Trickle { data: bytes, chunk };
    let mut reader = StreamReader::with_framer(trickle, Framer::with_max_payload(limit));
    collect(|| reader.next_message().map(|m| m.map(own)))
}

/// Arbitrary bytes, and bytes that start like a log (FILEMAGIC, then
/// message headers with small sizes) so that framing gets somewhere.
fn inputs() -> impl Strategy<Value = Vec<u8>> {
    let header = prop_oneof![
        Just(0xFFFF_FFFFu32),
        Just(0x1111_1111),
        Just(0x5555_5555),
        Just(0xAAAA_AAAA),
        any::<u32>()
    ];
    let message = (header, 0u32..64, prop::collection::vec(any::<u8>(), 0..80)).prop_map(
        |(kind, size, body)| {
            let mut m = kind.to_le_bytes().to_vec();
            m.extend(size.to_le_bytes());
            m.extend(body);
            m
        },
    );
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512),
        prop::collection::vec(message, 0..12).prop_map(|ms| {
            let mut log = b"VWFB".to_vec();
            log.extend(1u32.to_le_bytes());
            for m in ms {
                log.extend(m);
            }
            log
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn frames_tile_the_input_and_readers_agree(bytes in inputs(), chunk in 1usize..300, limit in 1u32..200) {
        let (frames, error) = slice_frames(&bytes, limit, Caches::On);
        let mut end = 0u64;
        for (n, (_, offset, index, len, payload)) in frames.iter().enumerate() {
            // Each message starts where the last one ended, in order.
            prop_assert_eq!(*offset, end);
            prop_assert_eq!(*index, n as u64);
            prop_assert!(payload.len() <= *len);
            prop_assert!(payload.len() <= limit as usize);
            end += *len as u64;
        }
        prop_assert!(end <= bytes.len() as u64);
        if let Some(at) = error {
            prop_assert!(at >= end && at <= bytes.len() as u64, "error at {} after {}", at, end);
        }
        prop_assert_eq!(slice_frames(&bytes, limit, Caches::Off), (frames.clone(), error));
        prop_assert_eq!(stream_frames(&bytes, limit, chunk), (frames, error));
    }
}
