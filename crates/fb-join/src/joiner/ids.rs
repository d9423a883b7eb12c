//! The event ids of one message and their groups: the first id seen is
//! group 0, the next new one group 1, and so on.
//!
//! A message of a few ids is scanned; past [`SCAN_LIMIT`] ids an
//! open-addressing table of (hash, group) slots takes over. The table is
//! kept from one message to the next, so a message of hundreds of events
//! neither allocates nor rehashes as it grows (a `HashMap` made per message
//! did both). Its slots hold no id, only the group whose id is in `ids`,
//! so the table borrows nothing from any message.
//!
//! Writers put a decision's outcomes right after it more often than not
//! (three events in four of the corpus's CB log): the group of the event
//! before is tried first, one compare instead of a hash and a probe
//! (not with [`Caches::Off`]).

use std::hash::BuildHasher;

use fb_format::EventView;

use crate::same::same_bytes;
use crate::Caches;

/// Ids up to which a scan is faster than hashing.
const SCAN_LIMIT: usize = 16;

/// Groups by event id, for one message at a time ([`IdGroups::start`]).
#[derive(Debug, Clone)]
pub(super) struct IdGroups {
    /// Keyed at random per process, so that ids chosen to collide cannot
    /// be known in advance.
    hasher: foldhash::fast::RandomState,
    /// `(tag, group + 1)`, `group + 1 == 0` for an empty slot; a power of
    /// two long, at least twice the message's event count once in use.
    slots: Vec<(u32, u32)>,
    /// Events of the message being grouped: the table is sized for them.
    events: usize,
    /// Whether `slots` holds the ids of the current message.
    hashing: bool,
    /// The group of the last id asked for in this message (`u32::MAX`
    /// before the first, and always without the shortcut: no group).
    last_group: u32,
    /// Or'ed into the group found, as the group to try first: 0 with the
    /// shortcut, `u32::MAX` (no group) without, so that nothing is tried
    /// first and no test is made per id.
    no_shortcut: u32,
    /// Ids found in the group of the id before.
    same_as_before: u64,
}

impl IdGroups {
    /// Groups, the group of the id before tried first with
    /// [`Caches::On`].
    pub(super) fn new(caches: Caches) -> Self {
        Self {
            hasher: foldhash::fast::RandomState::default(),
            slots: Vec::new(),
            events: 0,
            hashing: false,
            last_group: u32::MAX,
            no_shortcut: match caches {
                Caches::On => 0,
                Caches::Off => u32::MAX,
            },
            same_as_before: 0,
        }
    }

    /// Ids found in the group of the id before, without a lookup.
    pub(super) fn same_as_before(&self) -> u64 {
        self.same_as_before
    }

    /// Starts a message of `events` events: no id is known.
    pub(super) fn start(&mut self, events: usize) {
        self.events = events;
        self.hashing = false;
        self.last_group = u32::MAX;
    }

    /// The group of `id` among the message's `ids` (the ids seen so far, in
    /// order of their groups), a new group (and `id` pushed) when new.
    ///
    /// The shortcut is in line, the rest out of line: the call cost more
    /// than the compare of the three events in four that take it.
    #[inline(always)]
    pub(super) fn group_of<'m>(&mut self, ids: &mut Vec<&'m str>, id: &'m str) -> u32 {
        if let Some(known) = ids.get(self.last_group as usize) {
            if same_bytes(known.as_bytes(), id.as_bytes()) {
                self.same_as_before += 1;
                return self.last_group;
            }
        }
        self.lookup(ids, id)
    }

    /// [`Self::group_of`] without the shortcut; the group found is the
    /// one the shortcut tries next, if it runs.
    #[inline(never)]
    fn lookup<'m>(&mut self, ids: &mut Vec<&'m str>, id: &'m str) -> u32 {
        let group = self.find_or_add(ids, id);
        self.last_group = group | self.no_shortcut;
        group
    }

    /// The group of `id`, a new one (and `id` pushed) when new.
    #[inline(always)]
    fn find_or_add<'m>(&mut self, ids: &mut Vec<&'m str>, id: &'m str) -> u32 {
        if !self.hashing && ids.len() <= SCAN_LIMIT {
            if let Some(k) = ids
                .iter()
                .position(|known| same_bytes(known.as_bytes(), id.as_bytes()))
            {
                return k as u32;
            }
        } else {
            if !self.hashing {
                self.fill(ids);
            }
            let hash = self.hasher.hash_one(id);
            match self.find(hash, ids, id) {
                Ok(group) => return group,
                Err(slot) => {
                    if let Some(s) = self.slots.get_mut(slot) {
                        *s = (tag(hash), ids.len() as u32 + 1);
                    }
                }
            }
        }
        ids.push(id);
        (ids.len() - 1) as u32
    }

    /// Sizes and clears the table, then enters the ids known so far.
    fn fill(&mut self, ids: &[&str]) {
        // Half full at most: a message has no more ids than events (more
        // can only come from a caller that did not say so in `start`; then
        // `find` makes room).
        self.rebuild(
            ids,
            (self.events.max(ids.len() + 1) * 2).next_power_of_two(),
        );
        self.hashing = true;
    }

    /// `Ok(group)` of `id`, or `Err(slot)`: the empty slot where it goes.
    fn find(&mut self, hash: u64, ids: &[&str], id: &str) -> Result<u32, usize> {
        if ids.len() * 2 >= self.slots.len() {
            self.rebuild(ids, ((ids.len() + 1) * 4).next_power_of_two());
        }
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        // The table is never more than half full, so an empty slot comes
        // within its length.
        for _ in 0..self.slots.len() {
            let (t, plus_one) = self.slots.get(at).copied().unwrap_or((0, 0));
            if plus_one == 0 {
                return Err(at);
            }
            if t == tag(hash)
                && ids
                    .get(plus_one as usize - 1)
                    .is_some_and(|known| same_bytes(known.as_bytes(), id.as_bytes()))
            {
                return Ok(plus_one - 1);
            }
            at = (at + 1) & mask;
        }
        Err(at)
    }

    /// A table of `len` slots (a power of two, more than twice the ids)
    /// holding `ids`, which are distinct: each takes the first empty slot
    /// from its hash.
    fn rebuild(&mut self, ids: &[&str], len: usize) {
        self.slots.clear();
        self.slots.resize(len, (0, 0));
        let mask = len - 1;
        for (k, known) in ids.iter().enumerate() {
            let hash = self.hasher.hash_one(known);
            let mut at = hash as usize & mask;
            while self.slots.get(at).is_some_and(|s| s.1 != 0) {
                at = (at + 1) & mask;
            }
            if let Some(s) = self.slots.get_mut(at) {
                *s = (tag(hash), k as u32 + 1);
            }
        }
    }
}

/// Puts `views` (each with its group, below `groups`) into `out` in group
/// order, file order inside each group: a counting sort of positions, then
/// one move per view. A comparison sort moved these large views about
/// log2(n) times each, and a message of 377 events then spent more time in
/// `memmove` than in grouping.
pub(super) fn group_order<'m>(
    views: &[(u32, EventView<'m>)],
    groups: usize,
    scratch: &mut Vec<u32>,
    out: &mut Vec<(u32, EventView<'m>)>,
) {
    // `scratch`: where each group starts, then the positions in order.
    scratch.clear();
    scratch.resize(groups + views.len(), 0);
    let (starts, order) = scratch.split_at_mut(groups);
    for (g, _) in views {
        if let Some(n) = starts.get_mut(*g as usize) {
            *n += 1;
        }
    }
    let mut at = 0;
    for n in starts.iter_mut() {
        let count = *n;
        *n = at;
        at += count;
    }
    for (position, (g, _)) in views.iter().enumerate() {
        if let Some(n) = starts.get_mut(*g as usize) {
            if let Some(slot) = order.get_mut(*n as usize) {
                *slot = position as u32;
            }
            *n += 1;
        }
    }
    out.clear();
    out.extend(order.iter().filter_map(|&p| views.get(p as usize)));
}

/// The bits of `hash` a slot keeps to tell ids apart before comparing
/// them: the high half, where the slot index takes the low bits.
fn tag(hash: u64) -> u32 {
    (hash >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups of `ids` as a message of `events` events gives them.
    fn groups(g: &mut IdGroups, events: usize, ids: &[String]) -> Vec<u32> {
        g.start(events);
        let mut known = Vec::new();
        ids.iter().map(|id| g.group_of(&mut known, id)).collect()
    }

    /// The groups by definition: the index of the id's first appearance
    /// among the distinct ids.
    fn expected(ids: &[String]) -> Vec<u32> {
        let mut distinct: Vec<&String> = Vec::new();
        ids.iter()
            .map(|id| match distinct.iter().position(|d| *d == id) {
                Some(k) => k as u32,
                None => {
                    distinct.push(id);
                    (distinct.len() - 1) as u32
                }
            })
            .collect()
    }

    #[test]
    fn groups_are_the_order_of_first_appearance() {
        for caches in [Caches::On, Caches::Off] {
            groups_of_every_case(caches);
        }
    }

    fn groups_of_every_case(caches: Caches) {
        let mut g = IdGroups::new(caches);
        let cases: Vec<(&str, Vec<String>)> = vec![
            ("empty", vec![]),
            ("one id", vec!["a".into()]),
            (
                "few ids, repeated",
                ["a", "b", "a", "c", "b", "a"].map(String::from).to_vec(),
            ),
            (
                "100 decisions then 3 outcomes each, shuffled",
                (0..100)
                    .map(|i| format!("{i:x}"))
                    .chain((0..300).map(|i| format!("{:x}", (i * 37) % 100)))
                    .collect(),
            ),
            (
                "each decision followed by its outcomes, past the scan",
                (0..60)
                    .flat_map(|i| std::iter::repeat_n(format!("d{i}"), 1 + i % 4))
                    .collect(),
            ),
            (
                "runs of one id broken by another",
                ["a", "a", "b", "a", "a", "b", "b", "c", "a"]
                    .map(String::from)
                    .to_vec(),
            ),
            (
                "every id new",
                (0..1000).map(|i| format!("id-{i}")).collect(),
            ),
            (
                "ids that differ only in their end",
                (0..200)
                    .map(|i| format!("{}{}", "x".repeat(40), i % 50))
                    .collect(),
            ),
            ("empty ids among others", {
                let mut v: Vec<String> = (0..40).map(|i| format!("{i}")).collect();
                v.extend(["", "", "3", ""].map(String::from));
                v
            }),
        ];
        for (name, ids) in &cases {
            assert_eq!(
                groups(&mut g, ids.len(), ids),
                expected(ids),
                "{name}, {caches:?}"
            );
        }
        // The table kept from a large message serves a small one and the
        // next large one alike.
        for (name, ids) in cases.iter().rev() {
            assert_eq!(
                groups(&mut g, ids.len(), ids),
                expected(ids),
                "{name} again, {caches:?}"
            );
        }
    }

    /// The shortcut takes the ids equal to the one before, and only with
    /// caches on.
    #[test]
    fn the_shortcut_runs_only_with_caches_on() {
        let ids: Vec<String> = ["a", "a", "b", "b", "b", "a", "c", "c"]
            .map(String::from)
            .to_vec();
        for (caches, taken) in [(Caches::On, 4), (Caches::Off, 0)] {
            let mut g = IdGroups::new(caches);
            assert_eq!(groups(&mut g, ids.len(), &ids), expected(&ids));
            assert_eq!(g.same_as_before(), taken, "{caches:?}");
        }
    }

    #[test]
    fn more_ids_than_announced_still_group_right() {
        let mut g = IdGroups::new(Caches::On);
        let ids: Vec<String> = (0..500).map(|i| format!("{}", i % 300)).collect();
        // Announced as 3 events: the table grows as ids come.
        assert_eq!(groups(&mut g, 3, &ids), expected(&ids));
    }
}
