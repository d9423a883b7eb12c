//! What fb-join's speed caches share, and how often they served.

/// The hit rate of the JSON check's memos and the DSJSON writer's table
/// of probability arrays: a look every 1,024 tries, and 64 K turns of rest
/// when under a quarter hit (see [`fb_format::HitRate`]).
pub(crate) type MemoRate = fb_format::HitRate<1024, { 64 * 1024 }, 4>;

/// How much each speed cache and shortcut served so far, from
/// [`Joiner::cache_counts`](crate::Joiner::cache_counts) and
/// [`dsjson::Writer::cache_counts`](crate::dsjson::Writer::cache_counts):
/// with [`Caches::Off`](crate::Caches::Off) every count is zero but
/// `verified_in_full`, which counts the plain path instead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheCounts {
    /// zstd frames served from the frames decompressed before.
    pub zstd_frames: u64,
    /// Outcome payloads served with the parts verified of them before.
    pub outcome_parts: u64,
    /// JSON array elements and arrays stepped over as found valid before.
    pub json_elements: u64,
    /// Contexts equal to the last one found valid.
    pub repeated_contexts: u64,
    /// Contexts checked by their values alone, having a shape known.
    pub context_shapes: u64,
    /// Events put in the group of the event before (the same id) without
    /// a lookup.
    pub same_id_as_before: u64,
    /// Messages whose events were in group order already, not sorted.
    pub messages_in_group_order: u64,
    /// Float texts the DSJSON writer holds, to write again unprinted.
    pub float_texts_held: u64,
    /// Probability arrays written whole from their text written before.
    pub probability_arrays: u64,
    /// Minutes whose text the DSJSON writer kept, to write again.
    pub minute_texts_kept: u64,
    /// Payloads read through the flatbuffers verifier and its accessors
    /// instead of the quick verifier: those it declined, and with caches
    /// off every one. (Messages and events are counted by
    /// [`fb_format::Events::verified_in_full`]: the joiner reads them in a
    /// loop that keeps no count.)
    pub verified_in_full: u64,
}

impl CacheCounts {
    /// The counts of both, summed.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            zstd_frames: self.zstd_frames + other.zstd_frames,
            outcome_parts: self.outcome_parts + other.outcome_parts,
            json_elements: self.json_elements + other.json_elements,
            repeated_contexts: self.repeated_contexts + other.repeated_contexts,
            context_shapes: self.context_shapes + other.context_shapes,
            same_id_as_before: self.same_id_as_before + other.same_id_as_before,
            messages_in_group_order: self.messages_in_group_order + other.messages_in_group_order,
            float_texts_held: self.float_texts_held + other.float_texts_held,
            probability_arrays: self.probability_arrays + other.probability_arrays,
            minute_texts_kept: self.minute_texts_kept + other.minute_texts_kept,
            verified_in_full: self.verified_in_full + other.verified_in_full,
        }
    }

    /// Each cache's count by name, `verified_in_full` left out: for tests
    /// that must see every cache serve, or none.
    pub fn served(&self) -> [(&'static str, u64); 10] {
        [
            ("zstd_frames", self.zstd_frames),
            ("outcome_parts", self.outcome_parts),
            ("json_elements", self.json_elements),
            ("repeated_contexts", self.repeated_contexts),
            ("context_shapes", self.context_shapes),
            ("same_id_as_before", self.same_id_as_before),
            ("messages_in_group_order", self.messages_in_group_order),
            ("float_texts_held", self.float_texts_held),
            ("probability_arrays", self.probability_arrays),
            ("minute_texts_kept", self.minute_texts_kept),
        ]
    }
}
