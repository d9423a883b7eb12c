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

/// The chosen actions of one group.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Decisions counted.
    pub total: u64,
    /// Count per action id (the first [`MAX_ACTIONS`] distinct ones).
    pub by_action: BTreeMap<u64, u64>,
    /// Decisions whose action came after the first [`MAX_ACTIONS`].
    pub other: u64,
    /// Decisions without an action.
    pub none: u64,
}

impl Counts {
    fn add(&mut self, action: Option<u64>, n: u64) {
        self.total += n;
        let Some(a) = action else {
            self.none += n;
            return;
        };
        if let Some(c) = self.by_action.get_mut(&a) {
            *c += n;
        } else if self.by_action.len() < MAX_ACTIONS {
            self.by_action.insert(a, n);
        } else {
            self.other += n;
        }
    }

    /// The `n` most chosen actions, most first (the smaller id first
    /// among equals).
    pub fn top(&self, n: usize) -> Vec<(u64, u64)> {
        let mut all: Vec<(u64, u64)> = self.by_action.iter().map(|(&a, &c)| (a, c)).collect();
        all.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        all.truncate(n);
        all
    }
}

/// Chosen actions of every group.
#[derive(Debug, Clone, Default)]
pub struct Actions {
    /// Counts per group.
    pub groups: BTreeMap<Group, Counts>,
}

impl Actions {
    /// Adds the chosen action(s) of one kept event; continuous actions
    /// are not counted (they are numbers, not ids).
    pub fn add(&mut self, ev: &JoinedEvent<'_>) {
        match &ev.decision {
            Decision::Cb { actions, .. } => {
                let g = Group {
                    kind: ev.kind,
                    slot: None,
                };
                self.groups
                    .entry(g)
                    .or_default()
                    .add(actions.first().copied(), 1);
            }
            Decision::MultiSlot { slots, .. } => {
                for (i, slot) in slots.iter().enumerate().take(MAX_SLOTS) {
                    let g = Group {
                        kind: ev.kind,
                        slot: Some(i),
                    };
                    self.groups
                        .entry(g)
                        .or_default()
                        .add(slot.actions.first().map(|&a| u64::from(a)), 1);
                }
            }
            Decision::Ca { .. } => {}
        }
    }

    /// Adds the counts of events that came after ours.
    pub fn merge(&mut self, o: &Actions) {
        for (g, c) in &o.groups {
            let mine = self.groups.entry(*g).or_default();
            for (&a, &n) in &c.by_action {
                mine.add(Some(a), n);
            }
            mine.total += c.other + c.none;
            mine.other += c.other;
            mine.none += c.none;
        }
    }
}
