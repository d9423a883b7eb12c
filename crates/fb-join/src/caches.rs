//! What fb-join's speed caches share.

/// The hit rate of the JSON check's memos and the DSJSON writer's table
/// of probability arrays: a look every 1,024 tries, and 64 K turns of rest
/// when under a quarter hit (see [`fb_format::HitRate`]).
pub(crate) type MemoRate = fb_format::HitRate<1024, { 64 * 1024 }, 4>;
