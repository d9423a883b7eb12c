//! Joined events as compact records, made where they are joined: what
//! the evaluation sink needs of each decision, in flat buffers per batch.

use fb_join::{Decision, JoinedEvent, Problem};

use super::run::Kind;

/// Records in a batch before it is handed over.
const BATCH: usize = 4096;

/// One slot (or a CB decision) of a record.
#[derive(Debug, Clone, Copy)]
pub(super) struct SlotRec {
    /// Range in the batch's actions and probabilities.
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) reward: f64,
    pub(super) baseline: u64,
    /// Range of the slot's id in the batch's slot ids (empty: none).
    pub(super) id: (u32, u32),
}

/// One joined event, as the estimates need it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rec {
    pub(super) kind: Option<Kind>,
    /// Range of the id in the batch's ids.
    pub(super) id: (u32, u32),
    pub(super) seconds: i64,
    pub(super) learnable: bool,
    pub(super) p_drop: f64,
    pub(super) reward: f64,
    /// Range in the batch's slots.
    pub(super) slots: (u32, u32),
    /// CA: the logged action and its density.
    pub(super) ca: (f64, f64),
}

/// The events of a batch.
#[derive(Debug, Default)]
pub struct Records {
    pub(super) recs: Vec<Rec>,
    pub(super) slots: Vec<SlotRec>,
    pub(super) actions: Vec<u64>,
    pub(super) probs: Vec<f32>,
    pub(super) ids: String,
    pub(super) slot_ids: String,
}

fn at(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Records {
    fn push_slot(
        &mut self,
        actions: impl Iterator<Item = u64>,
        probs: &[f32],
        reward: f32,
        baseline: u64,
        id: Option<&str>,
    ) {
        let id_start = at(self.slot_ids.len());
        self.slot_ids.push_str(id.unwrap_or(""));
        let start = at(self.actions.len());
        self.actions.extend(actions);
        self.probs.extend_from_slice(probs);
        // Keep the two lists the same length whatever the log says.
        let len = self.actions.len().min(self.probs.len());
        self.actions.truncate(len);
        self.probs.truncate(len);
        self.slots.push(SlotRec {
            start,
            end: at(len),
            reward: f64::from(reward),
            baseline,
            id: (id_start, at(self.slot_ids.len())),
        });
    }

    fn add(&mut self, ev: &JoinedEvent<'_>) {
        let id_start = at(self.ids.len());
        self.ids.push_str(&ev.event_id);
        let slot_start = at(self.slots.len());
        let mut ca = (0.0, 0.0);
        let kind = match (&ev.decision, ev.kind) {
            (
                Decision::Cb {
                    actions,
                    probabilities,
                },
                k,
            ) => {
                self.push_slot(
                    actions.iter().copied(),
                    probabilities,
                    ev.original_reward,
                    1,
                    None,
                );
                Some(if k == Problem::Multistep {
                    Kind::Multistep
                } else {
                    Kind::Cb
                })
            }
            (Decision::MultiSlot { slots, baseline }, k) => {
                for (i, s) in slots.iter().enumerate() {
                    let base = baseline.get(i).copied().unwrap_or(0);
                    let reward = if k == Problem::Ccb {
                        s.original_reward
                    } else {
                        ev.original_reward
                    };
                    self.push_slot(
                        s.actions.iter().map(|&a| u64::from(a)),
                        &s.probabilities,
                        reward,
                        u64::try_from(base).unwrap_or(u64::MAX),
                        s.id.as_deref().filter(|_| k == Problem::Ccb),
                    );
                }
                Some(if k == Problem::Ccb {
                    Kind::Ccb
                } else {
                    Kind::Slates
                })
            }
            (Decision::Ca { action, pdf_value }, _) => {
                ca = (f64::from(*action), f64::from(*pdf_value));
                Some(Kind::Ca)
            }
        };
        self.recs.push(Rec {
            kind,
            id: (id_start, at(self.ids.len())),
            seconds: fb_join::time::key(&ev.time).0,
            learnable: !ev.skip_learn,
            p_drop: f64::from(ev.pdrop()),
            reward: f64::from(ev.original_reward),
            slots: (slot_start, at(self.slots.len())),
            ca,
        });
    }

    /// Empties the batch, keeping its room.
    pub(crate) fn clear(&mut self) {
        self.recs.clear();
        self.slots.clear();
        self.actions.clear();
        self.probs.clear();
        self.ids.clear();
        self.slot_ids.clear();
    }
}

/// Fills [`Records`].
pub struct RecordMaker;

impl fb_join::Maker for RecordMaker {
    type Batch = Records;

    fn batch(&mut self) -> Records {
        Records::default()
    }

    fn add(&mut self, batch: &mut Records, ev: &JoinedEvent<'_>) {
        batch.add(ev);
    }

    fn full(&self, batch: &Records) -> bool {
        batch.recs.len() >= BATCH
    }

    fn clear(&mut self, batch: &mut Records) {
        batch.clear();
    }
}
