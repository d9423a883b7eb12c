//! The dedup cache: action texts that contexts refer to as `{"__aid":N}`.

use std::collections::{HashMap, VecDeque};

/// An LRU list of action ids and their JSON texts.
///
/// Applying a `DedupInfo` adds each id at the front (or moves it there),
/// then evicts every entry behind the position of the info's *first* id.
#[derive(Debug, Default, Clone)]
pub struct DedupCache {
    order: VecDeque<u64>,
    values: HashMap<u64, String>,
}

impl DedupCache {
    /// Applies one `DedupInfo` (ids and values of equal length).
    pub fn apply<'a>(&mut self, entries: impl IntoIterator<Item = (u64, &'a str)>) {
        let mut first = None;
        for (id, value) in entries {
            first.get_or_insert(id);
            if self.values.insert(id, value.to_string()).is_some() {
                if let Some(pos) = self.order.iter().position(|x| *x == id) {
                    self.order.remove(pos);
                }
            }
            self.order.push_front(id);
        }
        let Some(first) = first else { return };
        if let Some(pos) = self.order.iter().position(|x| *x == first) {
            for evicted in self.order.drain(pos + 1..) {
                self.values.remove(&evicted);
            }
        }
    }

    /// The JSON text of action `id`, if cached.
    pub fn get(&self, id: u64) -> Option<&str> {
        self.values.get(&id).map(String::as_str)
    }

    /// Number of cached actions.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The cached actions, most recent first: applied back to front to an
    /// empty cache as one `DedupInfo`, they rebuild this cache.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &str)> + '_ {
        self.order
            .iter()
            .filter_map(|id| Some((*id, self.values.get(id)?.as_str())))
    }
}

/// One piece of a context: text as it is, or a `{"__aid":N}` reference.
enum Piece<'a> {
    Text(&'a [u8]),
    Reference(u64),
}

/// Walks `context` as text and references, in order, until `each` fails.
fn walk<E>(context: &[u8], mut each: impl FnMut(Piece<'_>) -> Result<(), E>) -> Result<(), E> {
    const KEY: &[u8] = b"\"__aid\"";
    let mut rest = context;
    while let Some(pos) = find(rest, KEY) {
        let (before, after) = rest.split_at(pos);
        let after_key = after.get(KEY.len()..).unwrap_or_default();
        // The reference is `{`, optional whitespace, then the key.
        let open = before.iter().rposition(|b| !b.is_ascii_whitespace());
        let reference = open.filter(|&o| before.get(o) == Some(&b'{'));
        match (reference, parse_reference(after_key)) {
            (Some(reference), Some((id, used))) => {
                each(Piece::Text(before.get(..reference).unwrap_or_default()))?;
                each(Piece::Reference(id))?;
                rest = after_key.get(used..).unwrap_or_default();
            }
            _ => {
                each(Piece::Text(before))?;
                each(Piece::Text(KEY))?;
                rest = after_key;
            }
        }
    }
    each(Piece::Text(rest))
}

/// Calls `found` with the id of every `{"__aid":N}` reference in
/// `context`, in order (what [`inline_actions`] would replace).
pub fn references(context: &[u8], mut found: impl FnMut(u64)) {
    let _ = walk::<()>(context, |piece| {
        if let Piece::Reference(id) = piece {
            found(id);
        }
        Ok(())
    });
}

/// Replaces every `{"__aid":N}` in `context` with the cached action text.
///
/// Returns the first id that is not cached, leaving `out` incomplete.
pub fn inline_actions(context: &[u8], cache: &DedupCache, out: &mut Vec<u8>) -> Result<(), u64> {
    walk(context, |piece| {
        match piece {
            Piece::Text(text) => out.extend_from_slice(text),
            Piece::Reference(id) => out.extend_from_slice(cache.get(id).ok_or(id)?.as_bytes()),
        }
        Ok(())
    })
}

/// Parses `  :  123  }` and returns the id and the bytes used.
fn parse_reference(s: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while s.get(*i).is_some_and(u8::is_ascii_whitespace) {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    if s.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    skip_ws(&mut i);
    let start = i;
    while s.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let id = std::str::from_utf8(s.get(start..i)?).ok()?.parse().ok()?;
    skip_ws(&mut i);
    (s.get(i) == Some(&b'}')).then_some((id, i + 1))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_evicts_behind_the_first_id() {
        let mut cache = DedupCache::default();
        cache.apply([(1, "a"), (2, "b"), (3, "c")]);
        assert_eq!(cache.len(), 3);
        cache.apply([(4, "d"), (2, "b2")]);
        // Order now 2, 4, 3, 1: everything behind 4 (the first id) goes.
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(2), Some("b2"));
        assert_eq!(cache.get(4), Some("d"));
        assert_eq!(cache.get(1), None);
        assert_eq!(cache.get(3), None);
    }

    #[test]
    fn inline_replaces_references() {
        let mut cache = DedupCache::default();
        cache.apply([(7, r#"{"TAction":{"a":1}}"#), (8, r#"{"TAction":{"b":2}}"#)]);
        let ctx = br#"{"U":{"x":1},"_multi":[{"__aid":7},{ "__aid" : 8 }]}"#;
        let mut out = Vec::new();
        inline_actions(ctx, &cache, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"U":{"x":1},"_multi":[{"TAction":{"a":1}},{"TAction":{"b":2}}]}"#
        );
        let mut out = Vec::new();
        assert_eq!(
            inline_actions(br#"[{"__aid":9}]"#, &cache, &mut out),
            Err(9)
        );
        let mut found = Vec::new();
        references(ctx, |id| found.push(id));
        assert_eq!(found, [7, 8]);
        // A key that is not a reference (no brace before it) is text.
        found.clear();
        references(br#"{"a":"__aid","b":[1, "__aid" :3}]"#, |id| found.push(id));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn entries_applied_back_to_front_rebuild_the_cache() {
        let mut cache = DedupCache::default();
        cache.apply([(1, "a"), (2, "b"), (3, "c"), (2, "b2")]);
        let entries: Vec<(u64, String)> =
            cache.entries().map(|(i, v)| (i, v.to_string())).collect();
        let mut rebuilt = DedupCache::default();
        rebuilt.apply(entries.iter().rev().map(|(i, v)| (*i, v.as_str())));
        assert!(rebuilt.entries().eq(cache.entries()));
        assert_eq!(cache.get(2), Some("b2"));
    }
}
