//! Whether the joiner read a REGULAR message whole: its event list, every
//! event, every payload decoded and every interaction's context checked
//! as JSON, with nothing to report. A sink that checks each message's
//! bytes itself (`fb validate`) then has nothing left to find in it.

/// What the joiner made of the last REGULAR message it read, as far as a
/// check of the message's bytes goes (see [`crate::Maker::message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MessageRead {
    /// Every one of its `events` was read whole and found sound: the
    /// list, each event, each payload decoded, each interaction's context
    /// valid JSON; nothing was reported.
    Whole {
        /// Events in the message.
        events: usize,
    },
    /// Something in it was reported, skipped or not read in full: events
    /// before any checkpoint, of a loop not selected, DedupInfo and
    /// episode entries, multistep episodes, contexts not checked (the
    /// reference's mode, inlined dedup actions), or the speed caches off
    /// (whose plain path leaves every check to the sink).
    #[default]
    NotWhole,
}

/// The count [`MessageRead`] is made from, kept by the joiner when
/// asked ([`ReadWhole::watching`]).
#[derive(Debug, Default)]
pub(super) struct ReadWhole {
    /// Whether messages are judged at all: off (convert and the others
    /// do not ask, and options that leave every check to the sink), a
    /// message costs one test.
    pub(super) watching: bool,
    /// Events of the message being joined read whole so far.
    read: usize,
    /// Its events, once its list was read.
    listed: Option<usize>,
    /// What was reported before it.
    problems_before: u64,
    /// The verdict on the last message.
    last: MessageRead,
}

impl ReadWhole {
    /// A message starts; `problems` were reported before it.
    pub(super) fn start(&mut self, problems: u64) {
        self.read = 0;
        self.listed = None;
        self.problems_before = problems;
    }

    /// Its event list was read: `events` events.
    pub(super) fn listed(&mut self, events: usize) {
        self.listed = Some(events);
    }

    /// One of its events was read whole (counted once per event).
    pub(super) fn read_one(&mut self) {
        self.read += 1;
    }

    /// The message ends with `problems` reported in all.
    pub(super) fn end(&mut self, problems: u64) {
        self.last = match self.listed {
            Some(events) if events == self.read && problems == self.problems_before => {
                MessageRead::Whole { events }
            }
            _ => MessageRead::NotWhole,
        };
    }

    /// The verdict on the last message.
    pub(super) fn last(&self) -> MessageRead {
        self.last
    }
}
