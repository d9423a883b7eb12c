//! What a run over the inputs saw besides joined events, and what it
//! tells the face that runs it (the command line prints it, Python keeps
//! it): damage with where it is, warnings, progress.

use std::path::Path;

use fb_format::salvage::SalvageReport;
use fb_join::Joiner;

/// Where and why an input is damaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The input, as messages name it (its path for files).
    pub input: String,
    /// Byte offset of the damage in that input, when one place is to
    /// blame.
    pub offset: Option<u64>,
    /// Index of the message there, when a message was being read.
    pub message_index: Option<u64>,
    /// What is wrong and what to do.
    pub why: String,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.input, self.why)
    }
}

/// Something a run has to say besides its output.
#[derive(Debug)]
pub enum Note<'a> {
    /// An input is damaged or not a log (also in the report): an error,
    /// said even when warnings are not.
    Damaged(&'a Damage),
    /// An input is readable but odd (empty, without FILEMAGIC).
    Warning {
        /// The input.
        input: &'a str,
        /// What is odd.
        what: &'a str,
    },
    /// What recovery salvaged of a damaged batch.
    Salvaged {
        /// The input.
        input: &'a str,
        /// The batch, its events kept, withheld and lost.
        report: &'a SalvageReport,
    },
    /// An input read through damage: its events kept, the bytes skipped.
    Recovered {
        /// The input.
        input: &'a str,
        /// Events joined from it.
        events: u64,
        /// Bytes skipped, in `ranges` ranges.
        skipped: u64,
        /// Ranges skipped.
        ranges: usize,
    },
    /// Something worth knowing about an input, not a problem.
    Info {
        /// The input.
        input: &'a str,
        /// What to know.
        what: &'a str,
    },
    /// An index beside a log cannot be used (`why`) and is rebuilt.
    IndexStale {
        /// The index file.
        index: &'a Path,
        /// Why it cannot be used.
        why: &'a str,
    },
    /// An index could not be rebuilt: the log is read whole.
    IndexUnusable {
        /// Why.
        why: &'a str,
    },
}

/// Told what a run has to say, as it goes. Every method does nothing by
/// default: [`Silent`] says nothing.
pub trait Observer {
    /// Something to say.
    fn note(&mut self, note: Note<'_>) {
        let _ = note;
    }

    /// Whether [`Observer::start`] wants the total: adding it up costs a
    /// `stat` of every input, which a folder of thousands of small files
    /// feels.
    fn wants_total(&self) -> bool {
        true
    }

    /// Work starts on `total` bytes (when known, and wanted).
    fn start(&mut self, total: Option<u64>) {
        let _ = total;
    }

    /// More `bytes` read and `events` joined since the last call.
    fn progress(&mut self, bytes: u64, events: u64) {
        let _ = (bytes, events);
    }

    /// The work is done.
    fn finish(&mut self) {}
}

/// An observer that says nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Observer for Silent {}

/// What a run over the inputs saw besides joined events.
#[derive(Debug, Default, Clone)]
pub struct RunReport {
    /// Messages read, per type.
    pub kinds: fb_join::MessageCounts,
    /// Damaged inputs and inputs that are not logs.
    pub damage: Vec<Damage>,
    /// Inputs read as logs (damaged ones included, those that are not logs
    /// or are empty left out).
    pub logs: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Where each input's diagnostics start among the joiner's kept ones,
    /// and its name: diagnostics of multi-input runs name their file.
    pub starts: Vec<(usize, String)>,
    /// Where each input's configuration changes start among the joiner's
    /// ([`Joiner::config_history`]), in the order of `starts`.
    pub config_starts: Vec<usize>,
    /// What recovery salvaged from damaged REGULAR messages, per input
    /// (`fb_format::salvage`).
    pub salvaged: Vec<(String, SalvageReport)>,
    /// Bytes of the current input already counted in `bytes`.
    pub(crate) input_start: u64,
}

impl RunReport {
    /// Notes that the input `name` starts here, its diagnostics after the
    /// first `kept` ones of `joiner`.
    pub fn begin(&mut self, name: String, joiner: &Joiner) {
        self.input_start = 0;
        self.starts.push((joiner.diagnostics().kept().len(), name));
        self.config_starts
            .push(joiner.config_history().changes.len());
    }

    /// Notes that the input `name` starts, where its diagnostics start to
    /// be placed later ([`RunReport::place_starts`]): a session knows it
    /// only once its batches are written. Its configuration changes start
    /// after those `joiner` noted so far (a session's reading thread
    /// follows the checkpoints of its inputs in turn).
    pub(crate) fn begin_pending(&mut self, name: String, joiner: &Joiner) {
        self.input_start = 0;
        self.starts.push((0, name));
        self.config_starts
            .push(joiner.config_history().changes.len());
    }

    /// Places where the diagnostics of the inputs begun from number `from`
    /// on start, in order.
    pub(crate) fn place_starts(&mut self, from: usize, starts: &[usize]) {
        let pending = self.starts.iter_mut().skip(from);
        for ((at, _), start) in pending.zip(starts) {
            *at = *start;
        }
    }

    /// The input that diagnostic number `index` (among the kept ones)
    /// came from.
    pub fn file_of(&self, index: usize) -> Option<&str> {
        let at = self.starts.partition_point(|(start, _)| *start <= index);
        at.checked_sub(1)
            .and_then(|k| self.starts.get(k))
            .map(|(_, name)| name.as_str())
    }

    /// The input that configuration change number `index` came from.
    pub fn file_of_change(&self, index: usize) -> Option<&str> {
        let at = self.config_starts.partition_point(|start| *start <= index);
        at.checked_sub(1)
            .and_then(|k| self.starts.get(k))
            .map(|(_, name)| name.as_str())
    }

    /// Whether an input was damaged or not a log (the command line then
    /// exits 1).
    pub fn failed(&self) -> bool {
        !self.damage.is_empty()
    }

    /// Records `damage` and tells `observer`.
    pub(crate) fn damaged(&mut self, damage: Damage, observer: &mut dyn Observer) {
        observer.note(Note::Damaged(&damage));
        self.damage.push(damage);
    }

    /// Takes in the messages and bytes of one feed; the framing error that
    /// ended it, if any.
    pub(crate) fn fed(&mut self, fed: &mut fb_join::FeedReport) -> Option<fb_format::Error> {
        self.kinds.merge(&fed.kinds);
        self.bytes = self
            .bytes
            .saturating_add(fed.offset.saturating_sub(self.input_start));
        self.input_start = fed.offset;
        fed.framing_error.take()
    }
}
