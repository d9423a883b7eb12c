//! One switch for every speed cache of reading and joining a log.

/// Whether the speed caches, memos and shortcuts run.
///
/// Each of them serves only what the plain path would give: frames and
/// outcome parts met before, the quick verifier in place of the
/// flatbuffers verifier and accessors, lines asked of the CPU ahead of
/// the reader (here); the JSON check's memos, the grouping's shortcuts,
/// the DSJSON writer's float texts, probability arrays and minute (in
/// fb-join). [`Caches::Off`] turns all of them off, so that the plain path
/// runs: to compare outputs with and without them (the tests do, on every
/// corpus log and on generated logs of every problem type), or to rule
/// them out when an output looks wrong. It is chosen where a decoder,
/// reader, joiner or writer is made, not asked per event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Caches {
    /// Every cache, memo and shortcut runs (the default).
    #[default]
    On,
    /// None runs: the plain path, for the same bytes out.
    Off,
}
