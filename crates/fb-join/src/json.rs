//! A fast JSON validity check (RFC 8259) that allocates nothing.
//!
//! Contexts are checked on every event in default mode; a general parser
//! spends most of its time building what this throws away.
//!
//! Contexts are small objects of many short keys and strings, so the time
//! goes per token, not per byte: the scanner is laid out for the common
//! tokens to take few instructions and for its branches to be ones the
//! processor guesses. UTF-8 has no pass of its own: outside strings only
//! ASCII is JSON, so checking the non-ASCII characters of strings, where
//! they are met, checks the whole text.

/// Why a text is not JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What is wrong.
    pub what: &'static str,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

/// Deepest nesting accepted.
pub const MAX_DEPTH: usize = 256;

/// Checks that `text` is exactly one JSON value, whitespace around it.
///
/// Checking many texts, [`Validator`] is faster where they repeat parts.
pub fn validate(text: &[u8]) -> Result<(), JsonError> {
    check(text, None)
}

/// Checks text after text as [`validate`] does, and says the same of each,
/// but remembers the objects found valid as array elements, and the arrays
/// of objects found valid, and steps over them when they come again.
///
/// A context's actions (`"_multi"`, `"_slots"`) are such arrays and
/// elements, and in a loop the same actions are offered to one event after
/// another: their bytes repeat, often the whole array. An element or array
/// byte-identical to one found valid (no deeper inside the text) is valid:
/// a JSON object or array ends at its own closing bracket, whatever
/// follows it.
///
/// Where elements rarely repeat, looking them up costs more than it
/// saves; the validator then stops looking for a while, and tries again.
///
/// A whole text identical to the last one found valid is stepped over
/// too, in the same way.
///
/// And a text with the shape of one of the last two texts checked in
/// full (the same bytes around other values: member names, brackets,
/// separators) has only its values checked (see `json/context_shapes.rs`):
/// a loop writes every context from one kind of record.
///
/// Made with [`Caches::Off`], it remembers nothing: each text goes through
/// [`validate`].
#[derive(Clone)]
pub struct Validator {
    /// `None` with [`Caches::Off`].
    memos: Option<Memos>,
}

/// What a [`Validator`] remembers.
#[derive(Clone)]
struct Memos {
    elements: JsonElementMemo,
    last: LastValidText,
    shapes: ContextShapes,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (tries, hits) = self.lookups();
        f.debug_struct("Validator")
            .field("lookups", &tries)
            .field("hits", &hits)
            .field("texts_repeated", &self.repeats())
            .field("shapes", &self.shapes())
            .finish_non_exhaustive()
    }
}

impl Default for Validator {
    fn default() -> Self {
        Self::new()
    }
}

impl Validator {
    /// A validator that remembers nothing yet. It holds 64 KiB, allocated
    /// here once.
    pub fn new() -> Self {
        Self::with_caches(Caches::On)
    }

    /// [`Validator::new`], or with [`Caches::Off`] one that remembers
    /// nothing and allocates nothing.
    pub fn with_caches(caches: Caches) -> Self {
        let memos = match caches {
            Caches::On => Some(Memos {
                elements: JsonElementMemo::new(true),
                last: LastValidText::default(),
                shapes: ContextShapes::default(),
            }),
            Caches::Off => None,
        };
        Self { memos }
    }

    /// Checks `text` as [`validate`] does.
    pub fn validate(&mut self, text: &[u8]) -> Result<(), JsonError> {
        let Some(memos) = &mut self.memos else {
            return check(text, None);
        };
        if memos.last.matches(text) {
            return Ok(());
        }
        if memos.shapes.fit(text, &mut memos.elements) {
            memos.last.keep(text);
            return Ok(());
        }
        check(text, Some(&mut memos.elements))?;
        memos.last.keep(text);
        memos.shapes.learn(text, Some(&mut memos.elements));
        Ok(())
    }

    /// Texts compared with the last valid one, and found equal to it.
    pub fn repeats(&self) -> (u64, u64) {
        self.memos.as_ref().map_or((0, 0), |m| m.last.rate.totals())
    }

    /// Elements looked up, and found, since this validator was made.
    pub fn lookups(&self) -> (u64, u64) {
        self.memos
            .as_ref()
            .map_or((0, 0), |m| m.elements.rate.totals())
    }

    /// Texts compared with the shapes of earlier texts, and found to have
    /// one (their values then checked alone).
    pub fn shapes(&self) -> (u64, u64) {
        self.memos
            .as_ref()
            .map_or((0, 0), |m| m.shapes.rate.totals())
    }
}

mod context_shapes;
mod element_memo;
mod last_valid_text;
mod scan;

use crate::Caches;
use context_shapes::ContextShapes;
use element_memo::JsonElementMemo;
use last_valid_text::LastValidText;
use scan::check;

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests;
