//! Which actions the loop chose: counts per problem type, and per slot
//! for CCB and Slates, of the first (chosen) action.

use std::collections::BTreeMap;

use fb_join::{Decision, JoinedEvent, Problem};

/// Distinct actions counted per group; later new ones count as "other",
/// so that a log of ever-new action ids does not grow memory.
pub const MAX_ACTIONS: usize = 1024;

/// Slots counted on their own; later ones are left out (as `fb stats`
/// gives estimates to the first 16).
pub const MAX_SLOTS: usize = 16;

/// Which decisions a count is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Group {
    /// Their problem type.
    pub kind: Problem,
    /// The slot, for CCB and Slates.
    pub slot: Option<usize>,
}

impl std::fmt::Display for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.slot {
            Some(s) => write!(f, "{} slot {s}", self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

/// Action ids below this are counted in a table by id rather than in
/// the map: most loops' ids are small, and a map lookup per slot of every
/// decision costs more.
const SMALL: usize = 256;

/// The chosen actions of one group.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Decisions counted.
    pub total: u64,
    /// Count per action id below [`SMALL`] (0: not counted).
    small: Vec<u64>,
    /// Distinct ids counted in `small`.
    small_distinct: usize,
    /// Count per action id from [`SMALL`] on. With `small`, the first
    /// [`MAX_ACTIONS`] distinct ids.
    large: BTreeMap<u64, u64>,
    /// Decisions whose action came after the first [`MAX_ACTIONS`].
    pub other: u64,
    /// Decisions without an action.
    pub none: u64,
}

impl Counts {
    /// Counts `n` decisions of `action`: inline for an id of the table
    /// counted before, most decisions' case.
    #[inline]
    fn add(&mut self, action: Option<u64>, n: u64) {
        // The table only ever holds ids below [`SMALL`].
        let known = action
            .and_then(|a| usize::try_from(a).ok())
            .and_then(|i| self.small.get_mut(i))
            .filter(|c| **c > 0);
        match known {
            Some(c) => {
                *c += n;
                self.total += n;
            }
            None => self.add_other(action, n),
        }
    }

    /// [`Counts::add`] of any other action, or none.
    #[inline(never)]
    fn add_other(&mut self, action: Option<u64>, n: u64) {
        self.total += n;
        let Some(a) = action else {
            self.none += n;
            return;
        };
        let full = self.distinct() >= MAX_ACTIONS;
        if let Some(i) = usize::try_from(a).ok().filter(|&i| i < SMALL) {
            if self.small.len() <= i {
                self.small.resize(i + 1, 0);
            }
            match self.small.get_mut(i) {
                Some(c) if *c > 0 => *c += n,
                Some(c) if !full => {
                    *c = n;
                    self.small_distinct += 1;
                }
                _ => self.other += n,
            }
        } else if let Some(c) = self.large.get_mut(&a) {
            *c += n;
        } else if !full {
            self.large.insert(a, n);
        } else {
            self.other += n;
        }
    }

    /// Distinct actions counted (at most [`MAX_ACTIONS`]).
    pub fn distinct(&self) -> usize {
        self.small_distinct + self.large.len()
    }

    /// Each action counted with its count, by id.
    pub fn by_action(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let small = self
            .small
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(a, &c)| (a as u64, c));
        small.chain(self.large.iter().map(|(&a, &c)| (a, c)))
    }

    /// The `n` most chosen actions, most first (the smaller id first
    /// among equals).
    pub fn top(&self, n: usize) -> Vec<(u64, u64)> {
        let mut all: Vec<(u64, u64)> = self.by_action().collect();
        all.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        all.truncate(n);
        all
    }

    /// Adds the counts of events that came after ours.
    fn merge(&mut self, o: &Counts) {
        // By id, as the map of every id gave them.
        for (a, n) in o.by_action() {
            self.add(Some(a), n);
        }
        self.total += o.other + o.none;
        self.other += o.other;
        self.none += o.none;
    }
}

/// The counts of one problem type: without a slot, and per slot.
#[derive(Debug, Clone)]
struct KindCounts {
    kind: Problem,
    whole: Counts,
    slots: Vec<Counts>,
}

/// Chosen actions of every group.
#[derive(Debug, Clone, Default)]
pub struct Actions {
    /// Per problem type, in the order first met: a search of a short
    /// list and an index per slot, not a map lookup per slot.
    kinds: Vec<KindCounts>,
}

impl Actions {
    /// The counts of `kind`, made when first met.
    fn of(&mut self, kind: Problem) -> Option<&mut KindCounts> {
        let at = match self.kinds.iter().position(|k| k.kind == kind) {
            Some(at) => at,
            None => {
                self.kinds.push(KindCounts {
                    kind,
                    whole: Counts::default(),
                    slots: Vec::new(),
                });
                self.kinds.len() - 1
            }
        };
        self.kinds.get_mut(at)
    }

    /// Adds the chosen action(s) of one kept event; continuous actions
    /// are not counted (they are numbers, not ids).
    pub fn add(&mut self, ev: &JoinedEvent<'_>) {
        match &ev.decision {
            Decision::Cb { actions, .. } => {
                if let Some(k) = self.of(ev.kind) {
                    k.whole.add(actions.first().copied(), 1);
                }
            }
            Decision::MultiSlot { slots, .. } => {
                let Some(k) = self.of(ev.kind) else {
                    return;
                };
                let n = slots.len().min(MAX_SLOTS);
                if k.slots.len() < n {
                    k.slots.resize_with(n, Counts::default);
                }
                for (c, slot) in k.slots.iter_mut().zip(slots) {
                    c.add(slot.actions.first().map(|&a| u64::from(a)), 1);
                }
            }
            Decision::Ca { .. } => {}
        }
    }

    /// Adds the counts of events that came after ours.
    pub fn merge(&mut self, o: &Actions) {
        for theirs in &o.kinds {
            let Some(mine) = self.of(theirs.kind) else {
                continue;
            };
            mine.whole.merge(&theirs.whole);
            if mine.slots.len() < theirs.slots.len() {
                mine.slots.resize_with(theirs.slots.len(), Counts::default);
            }
            for (m, t) in mine.slots.iter_mut().zip(&theirs.slots) {
                m.merge(t);
            }
        }
    }

    /// The counts per group that has any, in order of group.
    pub fn groups(&self) -> BTreeMap<Group, &Counts> {
        let mut groups = BTreeMap::new();
        for k in &self.kinds {
            let slots = k.slots.iter().enumerate().map(|(i, c)| (Some(i), c));
            for (slot, c) in std::iter::once((None, &k.whole)).chain(slots) {
                if c.total > 0 {
                    groups.insert(Group { kind: k.kind, slot }, c);
                }
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts kept in one map of every id, as they were before the
    /// table of small ids: what [`Counts`] must equal.
    #[derive(Default, Clone)]
    struct MapCounts {
        map: BTreeMap<u64, u64>,
        other: u64,
    }

    impl MapCounts {
        fn add(&mut self, a: u64, n: u64) {
            if let Some(c) = self.map.get_mut(&a) {
                *c += n;
            } else if self.map.len() < MAX_ACTIONS {
                self.map.insert(a, n);
            } else {
                self.other += n;
            }
        }

        fn merge(&mut self, o: &MapCounts) {
            for (&a, &n) in &o.map {
                self.add(a, n);
            }
            self.other += o.other;
        }
    }

    /// Ids below and past [`SMALL`], met again, and new ones past
    /// [`MAX_ACTIONS`]: counted as one map of every id counts them,
    /// added one by one and merged from two halves.
    #[test]
    fn small_and_large_ids_count_as_one_map() {
        let ids: Vec<u64> = (0..1100u64)
            .map(|i| if i % 3 == 0 { i / 3 } else { 1000 + i * 7 })
            .chain([0, 5, 1007, 1000 + 1099 * 7, 255, 256, 2])
            .collect();
        let (first, second) = ids.split_at(600);
        let mut refs = [MapCounts::default(), MapCounts::default()];
        let mut halves = [Counts::default(), Counts::default()];
        for ((r, c), part) in refs.iter_mut().zip(&mut halves).zip([first, second]) {
            for &a in part {
                r.add(a, 1);
                c.add(Some(a), 1);
            }
        }
        halves[1].add(None, 1);
        let mut one = Counts::default();
        let mut one_ref = MapCounts::default();
        for &a in &ids {
            one.add(Some(a), 1);
            one_ref.add(a, 1);
        }
        let [mut merged, later] = halves;
        merged.merge(&later);
        let [mut merged_ref, later_ref] = refs;
        merged_ref.merge(&later_ref);
        for (name, c, r, none) in [
            ("added", &one, &one_ref, 0),
            ("merged", &merged, &merged_ref, 1),
        ] {
            let want: Vec<(u64, u64)> = r.map.iter().map(|(&a, &n)| (a, n)).collect();
            assert_eq!(c.by_action().collect::<Vec<_>>(), want, "{name}");
            assert_eq!(c.distinct(), MAX_ACTIONS, "{name}");
            assert_eq!(c.total, ids.len() as u64 + none, "{name}");
            assert_eq!(c.none, none, "{name}");
            assert_eq!(c.other, r.other, "{name}");
            assert!(c.other > 0, "{name}: ids past the first {MAX_ACTIONS}");
        }
        assert_eq!(one.top(3), vec![(0, 2), (2, 2), (5, 2)]);
    }
}
