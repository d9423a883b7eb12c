//! Typed, verified views of message payloads.
//!
//! Every buffer — the message payload, each nested `Event`, each typed
//! payload — is run through the flatbuffers verifier before any accessor
//! reads it. Nothing is copied except zstd payloads, which are decompressed
//! into a buffer the [`PayloadDecoder`] reuses.

use fb_schema::{
    verified, verified_quick, CaEvent, CbEvent, CbParts, CheckpointInfo, DedupInfo, EpisodeEvent,
    Event, EventEncoding, FileHeader, JoinedEvent, JoinedPayload, Metadata, MultiSlotEvent,
    MultiStepEvent, OutcomeEvent, OutcomeParts, PayloadType, QuickVerify, TimeStamp,
};
use flatbuffers::{Follow, Verifiable};

use crate::caches::Caches;
use crate::error::{Error, Result};
use crate::framer::{Message, Position, DEFAULT_MAX_PAYLOAD};
use crate::outcome_parts_cache::{Find, OutcomePartsCache};
use crate::zstd_frame_cache::{Lookup, ZstdFrameCache, OUT_MAX};

fn verify_at<'a, T>(buf: &'a [u8], offset: u64, index: u64, what: &'static str) -> Result<T::Inner>
where
    T: Follow<'a> + Verifiable + QuickVerify + 'a,
{
    verified_quick::<T>(buf).map_err(|source| Error::InvalidFlatbuffer {
        offset,
        index,
        what,
        source,
    })
}

fn verify_slow<'a, T>(
    buf: &'a [u8],
    offset: u64,
    index: u64,
    what: &'static str,
) -> Result<T::Inner>
where
    T: Follow<'a> + Verifiable + 'a,
{
    verified::<T>(buf).map_err(|source| Error::InvalidFlatbuffer {
        offset,
        index,
        what,
        source,
    })
}

/// [`verify_at`] with the quick verifier, [`verify_slow`] without (counted
/// in `verified_in_full`).
fn verify_with<'a, T>(
    buf: &'a [u8],
    at: Position,
    what: &'static str,
    caches: Caches,
    verified_in_full: &mut u64,
) -> Result<T::Inner>
where
    T: Follow<'a> + Verifiable + QuickVerify + 'a,
{
    match caches {
        Caches::On => verify_at::<T>(buf, at.offset, at.index, what),
        Caches::Off => {
            *verified_in_full += 1;
            verify_slow::<T>(buf, at.offset, at.index, what)
        }
    }
}

impl<'a> Message<'a> {
    /// The `FileHeader` of a HEADER message.
    pub fn file_header(&self) -> Result<FileHeader<'a>> {
        self.verify::<FileHeader>("FileHeader")
    }

    /// The `CheckpointInfo` of a CHECKPOINT message.
    pub fn checkpoint(&self) -> Result<CheckpointInfo<'a>> {
        self.verify::<CheckpointInfo>("CheckpointInfo")
    }

    /// The `JoinedPayload` of a REGULAR message.
    pub fn joined_payload(&self) -> Result<JoinedPayload<'a>> {
        verify_at::<JoinedPayload>(self.payload, self.offset, self.index, "JoinedPayload")
    }

    /// The events of a REGULAR message, each verified on its own.
    pub fn events(&self) -> Result<Events<'a>> {
        self.events_with(Caches::On)
    }

    /// [`Message::events`], the message and its events verified by the
    /// quick verifier with [`Caches::On`], by the flatbuffers verifier
    /// and read through its accessors with [`Caches::Off`].
    pub fn events_with(&self, caches: Caches) -> Result<Events<'a>> {
        let (buf, offset, index, what) = (self.payload, self.offset, self.index, "JoinedPayload");
        let payload = match caches {
            Caches::On => verify_at::<JoinedPayload>(buf, offset, index, what)?,
            Caches::Off => verify_slow::<JoinedPayload>(buf, offset, index, what)?,
        };
        Ok(Events {
            offset,
            index,
            list: payload.events(),
            next: 0,
            caches,
            verified_in_full: u64::from(caches == Caches::Off),
        })
    }

    /// Verifies the payload as a `T` (whatever the message kind says).
    pub fn verify<T>(&self, what: &'static str) -> Result<T::Inner>
    where
        T: Follow<'a> + Verifiable + 'a,
    {
        verify_slow::<T>(self.payload, self.offset, self.index, what)
    }
}

/// The events of one REGULAR message, in file order.
///
/// Yields an error for an event that lacks `event`, `timestamp`, `meta` or
/// `meta.id`, or whose nested buffers fail verification; iteration may go
/// on after it, the caller decides.
#[derive(Debug, Clone)]
pub struct Events<'a> {
    offset: u64,
    index: u64,
    list: Option<flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<JoinedEvent<'a>>>>,
    next: usize,
    caches: Caches,
    verified_in_full: u64,
}

impl<'a> Events<'a> {
    /// Number of `JoinedEvent`s in the message.
    pub fn total(&self) -> usize {
        self.list.map_or(0, |l| l.len())
    }

    /// Buffers read so far through the flatbuffers verifier rather than
    /// the quick one: the events it declined; with [`Caches::Off`], the
    /// message and every event.
    pub fn verified_in_full(&self) -> u64 {
        self.verified_in_full
    }
}

impl<'a> Iterator for Events<'a> {
    type Item = Result<EventView<'a>>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let list = self.list?;
        if self.next >= list.len() {
            return None;
        }
        let position = self.next;
        self.next += 1;
        Some(EventView::decode(
            list.get(position),
            (self.offset, self.index, position),
            self.caches,
            &mut self.verified_in_full,
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.total().saturating_sub(self.next);
        (left, Some(left))
    }
}

/// One verified event of a REGULAR message.
#[derive(Debug, Clone, Copy)]
pub struct EventView<'a> {
    /// Byte offset of the enclosing message.
    pub offset: u64,
    /// Index of the enclosing message.
    pub index: u64,
    /// Position of the event inside the message.
    pub position: usize,
    /// The event's id (`meta.id`).
    pub id: &'a str,
    /// When the joiner enqueued the event.
    pub enqueued: TimeStamp,
    /// The event's metadata.
    pub meta: Metadata<'a>,
    // Read once, while verifying: the joiner asks for them, and each
    // flatbuffers field read walks the vtable again.
    kind: PayloadType,
    encoding: EventEncoding,
    pass_probability: f32,
    // Borrowed, as in `EventParts`.
    client_time: Option<&'a [u8; 12]>,
    payload: &'a [u8],
}

impl<'a> EventView<'a> {
    #[inline(always)]
    fn decode(
        joined: JoinedEvent<'a>,
        (offset, index, position): (u64, u64, usize),
        caches: Caches,
        verified_in_full: &mut u64,
    ) -> Result<Self> {
        let missing = |what, field| Error::MissingField {
            offset,
            index,
            what,
            field,
        };
        let bytes = joined
            .event()
            .ok_or_else(|| missing("JoinedEvent", "event"))?;
        let enqueued = *joined
            .timestamp()
            .ok_or_else(|| missing("JoinedEvent", "timestamp"))?;
        Self::from_parts_in_line(
            bytes.bytes(),
            enqueued,
            (offset, index, position),
            caches,
            verified_in_full,
        )
    }

    /// The view of a `JoinedEvent` given by its `event` bytes (verified
    /// here as an `Event`) and its timestamp.
    ///
    /// Out of line: its callers off the joiner's path (the index's rare
    /// messages, salvage) would otherwise carry its body, and the index's
    /// hot loop ran a third slower for it.
    #[inline(never)]
    pub(crate) fn from_parts(
        bytes: &'a [u8],
        enqueued: TimeStamp,
        offset: u64,
        index: u64,
        position: usize,
    ) -> Result<Self> {
        let at = (offset, index, position);
        Self::from_parts_in_line(bytes, enqueued, at, Caches::On, &mut 0)
    }

    /// [`EventView::from_parts`], in line in the joiner's loop; the quick
    /// verifier only with [`Caches::On`], and the events verified by the
    /// flatbuffers verifier counted in `verified_in_full`.
    #[inline(always)]
    fn from_parts_in_line(
        bytes: &'a [u8],
        enqueued: TimeStamp,
        (offset, index, position): (u64, u64, usize),
        caches: Caches,
        verified_in_full: &mut u64,
    ) -> Result<Self> {
        // Each arm makes its own view: joined into one `parts` first, the
        // two would be copied into one place, and the copy's wide loads of
        // the verifier's narrow stores wait for them (a store-forwarding
        // stall of each event; bench/NOTES.md has its cost).
        let quick = match caches {
            Caches::On => fb_schema::event_parts(bytes),
            Caches::Off => None,
        };
        match quick {
            Some(parts) => Self::of_parts(parts, enqueued, offset, index, position),
            None => {
                *verified_in_full += 1;
                let parts = verify_slow::<Event>(bytes, offset, index, "Event")?.into();
                Self::of_parts(parts, enqueued, offset, index, position)
            }
        }
    }

    /// The view of an event whose parts the verifier read; an error for a
    /// missing `meta` or `meta.id`.
    #[inline(always)]
    fn of_parts(
        parts: fb_schema::EventParts<'a>,
        enqueued: TimeStamp,
        offset: u64,
        index: u64,
        position: usize,
    ) -> Result<Self> {
        let missing = |what, field| Error::MissingField {
            offset,
            index,
            what,
            field,
        };
        let meta = parts.meta.ok_or_else(|| missing("Event", "meta"))?;
        let id = parts.id.ok_or_else(|| missing("Metadata", "id"))?;
        Ok(Self {
            offset,
            index,
            position,
            id,
            enqueued,
            meta,
            kind: parts.payload_type,
            encoding: parts.encoding,
            pass_probability: parts.pass_probability,
            client_time: parts.client_time,
            payload: parts.payload.unwrap_or_default(),
        })
    }

    /// The payload type the metadata declares.
    pub fn payload_type(&self) -> PayloadType {
        self.kind
    }

    /// The probability the event was kept by sampling (`meta.pass_probability`).
    pub fn pass_probability(&self) -> f32 {
        self.pass_probability
    }

    /// The client time, `None` when absent or all zeros.
    pub fn client_time(&self) -> Option<TimeStamp> {
        self.client_time
            .map(|t| TimeStamp(*t))
            .filter(|t| !t.is_zero())
    }

    /// The payload bytes as stored (possibly compressed).
    pub fn raw_payload(&self) -> &'a [u8] {
        self.payload
    }

    /// True when the payload is zstd-compressed.
    pub fn is_compressed(&self) -> bool {
        self.encoding == EventEncoding::Zstd
    }
}

/// A verified typed payload.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Payload<'a> {
    /// A contextual-bandit decision.
    Cb(CbEvent<'a>),
    /// A conditional contextual-bandit decision.
    Ccb(MultiSlotEvent<'a>),
    /// A slates decision.
    Slates(MultiSlotEvent<'a>),
    /// A continuous-action decision.
    Ca(CaEvent<'a>),
    /// An outcome or activation.
    Outcome(OutcomeEvent<'a>),
    /// Action texts for deduplicated contexts.
    Dedup(DedupInfo<'a>),
    /// One step of a multistep episode.
    MultiStep(MultiStepEvent<'a>),
    /// The start of a multistep episode.
    Episode(EpisodeEvent<'a>),
    /// A payload type this schema does not know.
    Unknown(PayloadType),
}

impl Payload<'_> {
    /// Name of the payload's table.
    pub fn table_name(&self) -> &'static str {
        match self {
            Self::Cb(_) => "CbEvent",
            Self::Ccb(_) | Self::Slates(_) => "MultiSlotEvent",
            Self::Ca(_) => "CaEvent",
            Self::Outcome(_) => "OutcomeEvent",
            Self::Dedup(_) => "DedupInfo",
            Self::MultiStep(_) => "MultiStepEvent",
            Self::Episode(_) => "EpisodeEvent",
            Self::Unknown(_) => "unknown",
        }
    }
}

/// Compression ratio above which a frame's declared size is not trusted
/// for reserving memory up front (JSON contexts compress 5-20x).
const PLAUSIBLE_RATIO: u64 = 64;
/// Declared sizes up to this are always reserved up front.
const PLAUSIBLE_SLACK: u64 = 64 << 10;

/// Decodes typed payloads, decompressing zstd into one reused buffer.
///
/// Frames that come again byte for byte (outcomes of one value, the
/// `DedupInfo` of one set of actions) are served from the last ones
/// decompressed rather than decompressed again: see
/// `zstd_frame_cache.rs`. Outcome payloads that come again are not
/// verified again: their parts are kept with them
/// (`outcome_parts_cache.rs`). Neither runs with [`Caches::Off`], nor the
/// quick verifier.
pub struct PayloadDecoder {
    unpack: Unpack,
    outcome_parts: OutcomePartsCache,
    caches: Caches,
    /// Payloads read through the flatbuffers verifier, not the quick one.
    verified_in_full: u64,
}

/// What decompresses: apart from [`OutcomePartsCache`], so that a
/// payload's bytes and the outcomes table can be borrowed at once.
struct Unpack {
    scratch: Vec<u8>,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    max_size: usize,
    frames: ZstdFrameCache,
}

impl std::fmt::Debug for PayloadDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (served, missed) = self.unpack.frames.counts();
        f.debug_struct("PayloadDecoder")
            .field("max_size", &self.unpack.max_size)
            .field("caches", &self.caches)
            .field("frames_served_again", &served)
            .field("frames_looked_up_and_missed", &missed)
            .finish_non_exhaustive()
    }
}

impl Default for PayloadDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PAYLOAD as usize)
    }
}

impl PayloadDecoder {
    /// A decoder that refuses decompressed payloads above `max_size` bytes.
    pub fn new(max_size: usize) -> Self {
        Self::with_caches(max_size, Caches::On)
    }

    /// [`PayloadDecoder::new`]; with [`Caches::Off`], every frame is
    /// decompressed, and every payload verified by the flatbuffers
    /// verifier and read through its accessors.
    pub fn with_caches(max_size: usize, caches: Caches) -> Self {
        let (frames, outcome_parts) = match caches {
            Caches::On => (ZstdFrameCache::default(), OutcomePartsCache::default()),
            Caches::Off => (ZstdFrameCache::off(), OutcomePartsCache::off()),
        };
        Self {
            unpack: Unpack {
                scratch: Vec::new(),
                zstd: None,
                max_size,
                frames,
            },
            outcome_parts,
            caches,
            verified_in_full: 0,
        }
    }

    /// zstd frames served again from the last ones decompressed, rather
    /// than decompressed again.
    pub fn frames_served_again(&self) -> u64 {
        self.unpack.frames.counts().0
    }

    /// Outcome payloads served with the parts verified of them before.
    pub fn outcome_parts_served_again(&self) -> u64 {
        self.outcome_parts.hits()
    }

    /// Payloads read so far through the flatbuffers verifier and its
    /// accessors rather than the quick verifier: those it declined; with
    /// [`Caches::Off`], every one.
    pub fn verified_in_full(&self) -> u64 {
        self.verified_in_full
    }

    /// The payload bytes, decompressed when the event says zstd.
    pub fn bytes<'s, 'a: 's>(&'s mut self, view: &EventView<'a>) -> Result<&'s [u8]> {
        self.unpack.bytes(view)
    }
}

impl Unpack {
    // In line: most payloads are stored as they are, and the call cost
    // more than handing them back (24 instructions an outcome).
    #[inline(always)]
    fn bytes<'s, 'a: 's>(&'s mut self, view: &EventView<'a>) -> Result<&'s [u8]> {
        let raw = view.raw_payload();
        if !view.is_compressed() {
            return Ok(raw);
        }
        self.decompressed(view, raw)
    }

    /// The payload `raw` of `view`, stored compressed, decompressed.
    #[inline(never)]
    fn decompressed<'s, 'a: 's>(
        &'s mut self,
        view: &EventView<'a>,
        raw: &'a [u8],
    ) -> Result<&'s [u8]> {
        let fail = |reason: String| Error::Decompress {
            offset: view.offset,
            index: view.index,
            event_id: view.id.to_string(),
            reason,
        };
        let size = match zstd::zstd_safe::get_frame_content_size(raw) {
            Ok(Some(size)) => size,
            Ok(None) => {
                return Err(fail(
                    "the frame header does not state the content size".into(),
                ))
            }
            Err(_) => return Err(fail("not a zstd frame".into())),
        };
        if size > self.max_size as u64 {
            return Err(fail(format!(
                "the frame declares {size} bytes, above the limit of {} bytes",
                self.max_size
            )));
        }
        self.scratch.clear();
        if size
            > PLAUSIBLE_RATIO
                .saturating_mul(raw.len() as u64)
                .saturating_add(PLAUSIBLE_SLACK)
        {
            // A frame claiming far more than its bytes can plausibly hold:
            // decode it as a stream, so memory follows what really comes
            // out instead of what the header claims.
            use std::io::Read as _;
            let decoder = zstd::stream::read::Decoder::with_buffer(raw)
                .map_err(|e| fail(format!("cannot create a decompressor: {e}")))?;
            let n = decoder
                .take(size.saturating_add(1))
                .read_to_end(&mut self.scratch)
                .map_err(|e| fail(format!("corrupt frame: {e}")))?;
            if n as u64 != size {
                return Err(fail(format!("frame declared {size} bytes but held {n}")));
            }
            return Ok(&self.scratch);
        }
        let at = match self.frames.lookup(view.payload_type().0, raw) {
            Lookup::Found(at) => return Ok(self.frames.served(at)),
            Lookup::Missing(at) if size <= OUT_MAX as u64 => Some(at),
            _ => None,
        };
        let dctx = match &mut self.zstd {
            Some(dctx) => dctx,
            slot => slot.insert(
                zstd::bulk::Decompressor::new()
                    .map_err(|e| fail(format!("cannot create a decompressor: {e}")))?,
            ),
        };
        // `size` is bounded by max_size and by the ratio check above. The
        // scratch buffer is sized even for a frame the table takes: when a
        // kind stops being looked up, its frames come here, and a buffer
        // grown then would allocate long after the warm-up.
        self.scratch.clear();
        self.scratch.reserve(size as usize);
        // A slot holds no frame while it is written: one that fails is
        // never served.
        if let Some((at, room)) = at.and_then(|at| Some((at, self.frames.out(at)?))) {
            let n = dctx
                .decompress_to_buffer(raw, room)
                .map_err(|e| fail(format!("corrupt frame: {e}")))?;
            if n as u64 != size {
                return Err(fail(format!("frame declared {size} bytes but held {n}")));
            }
            return Ok(self.frames.keep(at, raw, n));
        }
        let n = dctx
            .decompress_to_buffer(raw, &mut self.scratch)
            .map_err(|e| fail(format!("corrupt frame: {e}")))?;
        if n as u64 != size {
            return Err(fail(format!("frame declared {size} bytes but held {n}")));
        }
        Ok(&self.scratch)
    }
}

impl PayloadDecoder {
    /// The `CbEvent` payload of `view`, as the fast verifier reads it, or
    /// through the flatbuffers verifier and accessors where it declines
    /// (which also gives the errors). The payload is decompressed once.
    pub fn cb<'s, 'a: 's>(&'s mut self, view: &EventView<'a>) -> Result<CbParts<'s>> {
        let at = Position::new(view.offset, view.index);
        let full = &mut self.verified_in_full;
        with_cb(self.unpack.bytes(view)?, at, self.caches, full, |cb| *cb)
    }

    /// The `OutcomeEvent` payload of `view`, as [`PayloadDecoder::cb`]
    /// reads a `CbEvent`.
    pub fn outcome<'s, 'a: 's>(&'s mut self, view: &EventView<'a>) -> Result<OutcomeParts<'s>> {
        self.with_outcome(view, |o| *o)
    }

    /// [`PayloadDecoder::outcome`], handed to `f` where it is read rather
    /// than returned. Returned, the parts would be copied whole out of the
    /// verifier's result, and a copy's wide loads of its narrow stores
    /// wait for them: a store-forwarding stall an outcome, on the hottest
    /// path of a conversion. `f` is called once.
    #[inline(always)]
    pub fn with_outcome<'s, 'a: 's, R>(
        &'s mut self,
        view: &EventView<'a>,
        mut f: impl FnMut(&OutcomeParts<'s>) -> R,
    ) -> Result<R> {
        let at = Position::new(view.offset, view.index);
        let (caches, full) = (self.caches, &mut self.verified_in_full);
        let bytes = self.unpack.bytes(view)?;
        // With caches off the table is off too: every lookup is skipped.
        let cache = &mut self.outcome_parts;
        match cache.find(bytes) {
            Find::Found(slot) => match cache.parts(slot) {
                Some(parts) => Ok(f(parts)),
                None => with_outcome(bytes, at, caches, full, f),
            },
            Find::Missing(slot) => with_outcome(bytes, at, caches, full, |parts| {
                cache.keep(slot, bytes, parts);
                f(parts)
            }),
            Find::Skipped => with_outcome(bytes, at, caches, full, f),
        }
    }

    /// The verified typed payload of `view`.
    pub fn payload<'s, 'a: 's>(&'s mut self, view: &EventView<'a>) -> Result<Payload<'s>> {
        let (at, kind) = (Position::new(view.offset, view.index), view.payload_type());
        let full = &mut self.verified_in_full;
        payload_of(self.unpack.bytes(view)?, kind, at, self.caches, full)
    }

    /// [`EventView::with_cb_in_place`], verified as this decoder verifies.
    #[inline(always)]
    pub fn with_cb_in_place<'a, R>(
        &mut self,
        view: &EventView<'a>,
        f: impl FnMut(&CbParts<'a>) -> R,
    ) -> Option<Result<R>> {
        let (caches, full) = (self.caches, &mut self.verified_in_full);
        (!view.is_compressed()).then(|| with_cb(view.payload, view.at(), caches, full, f))
    }

    /// [`EventView::payload_in_place`], verified as this decoder verifies.
    pub fn payload_in_place<'a>(&mut self, view: &EventView<'a>) -> Option<Result<Payload<'a>>> {
        let (caches, full) = (self.caches, &mut self.verified_in_full);
        (!view.is_compressed())
            .then(|| payload_of(view.payload, view.kind, view.at(), caches, full))
    }
}

impl<'a> EventView<'a> {
    /// [`PayloadDecoder::cb`] for a payload stored uncompressed: the parts
    /// borrow the log rather than a decoder, so they outlive it. `None`
    /// for a compressed payload, which only a decoder can read.
    pub fn cb_in_place(&self) -> Option<Result<CbParts<'a>>> {
        self.with_cb_in_place(|cb| *cb)
    }

    /// [`EventView::cb_in_place`], handed to `f` where it is read, for the
    /// reason [`PayloadDecoder::with_outcome`] gives. `f` is called once.
    #[inline(always)]
    pub fn with_cb_in_place<R>(&self, f: impl FnMut(&CbParts<'a>) -> R) -> Option<Result<R>> {
        (!self.is_compressed()).then(|| with_cb(self.payload, self.at(), Caches::On, &mut 0, f))
    }

    /// [`PayloadDecoder::payload`] for a payload stored uncompressed, as
    /// [`EventView::cb_in_place`].
    pub fn payload_in_place(&self) -> Option<Result<Payload<'a>>> {
        (!self.is_compressed())
            .then(|| payload_of(self.payload, self.kind, self.at(), Caches::On, &mut 0))
    }

    /// Where the event's message is.
    fn at(&self) -> Position {
        Position::new(self.offset, self.index)
    }
}

/// The `CbEvent` in `bytes`, as the fast verifier reads it (with
/// [`Caches::On`]) or through the flatbuffers verifier where it declines
/// or is not to run (counted in `verified_in_full`), handed to `f` (called
/// once): each arm calls it where its parts lie, rather than joining them
/// in one place first (see [`PayloadDecoder::with_outcome`]).
#[inline(always)]
fn with_cb<'b, R>(
    bytes: &'b [u8],
    Position { offset, index }: Position,
    caches: Caches,
    verified_in_full: &mut u64,
    mut f: impl FnMut(&CbParts<'b>) -> R,
) -> Result<R> {
    let quick = match caches {
        Caches::On => fb_schema::cb_parts(bytes),
        Caches::Off => None,
    };
    match quick {
        Some(parts) => Ok(f(&parts)),
        None => {
            *verified_in_full += 1;
            verify_slow::<CbEvent>(bytes, offset, index, "CbEvent").map(|e| f(&e.into()))
        }
    }
}

/// [`with_cb`] for an `OutcomeEvent`.
#[inline(always)]
fn with_outcome<'b, R>(
    bytes: &'b [u8],
    Position { offset, index }: Position,
    caches: Caches,
    verified_in_full: &mut u64,
    mut f: impl FnMut(&OutcomeParts<'b>) -> R,
) -> Result<R> {
    let quick = match caches {
        Caches::On => fb_schema::outcome_parts(bytes),
        Caches::Off => None,
    };
    match quick {
        Some(parts) => Ok(f(&parts)),
        None => {
            *verified_in_full += 1;
            verify_slow::<OutcomeEvent>(bytes, offset, index, "OutcomeEvent").map(|e| f(&e.into()))
        }
    }
}

/// The payload in `bytes`, of type `kind`, verified as [`verify_with`]
/// verifies.
fn payload_of<'b>(
    bytes: &'b [u8],
    kind: PayloadType,
    at: Position,
    caches: Caches,
    full: &mut u64,
) -> Result<Payload<'b>> {
    Ok(match kind {
        PayloadType::CB => Payload::Cb(verify_with::<CbEvent>(bytes, at, "CbEvent", caches, full)?),
        PayloadType::CCB => Payload::Ccb(verify_with::<MultiSlotEvent>(
            bytes,
            at,
            "MultiSlotEvent",
            caches,
            full,
        )?),
        PayloadType::Slates => Payload::Slates(verify_with::<MultiSlotEvent>(
            bytes,
            at,
            "MultiSlotEvent",
            caches,
            full,
        )?),
        PayloadType::CA => Payload::Ca(verify_with::<CaEvent>(bytes, at, "CaEvent", caches, full)?),
        PayloadType::Outcome => Payload::Outcome(verify_with::<OutcomeEvent>(
            bytes,
            at,
            "OutcomeEvent",
            caches,
            full,
        )?),
        PayloadType::DedupInfo => Payload::Dedup(verify_with::<DedupInfo>(
            bytes,
            at,
            "DedupInfo",
            caches,
            full,
        )?),
        PayloadType::MultiStep => Payload::MultiStep(verify_with::<MultiStepEvent>(
            bytes,
            at,
            "MultiStepEvent",
            caches,
            full,
        )?),
        PayloadType::Episode => Payload::Episode(verify_with::<EpisodeEvent>(
            bytes,
            at,
            "EpisodeEvent",
            caches,
            full,
        )?),
        other => Payload::Unknown(other),
    })
}
