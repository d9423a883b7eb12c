//! `fb report` and `vwlogs.report`: one self-contained HTML page showing
//! a loop's health, built in one pass over the log.
//!
//! [`HealthSink`] is a pipeline sink, like `fb stats`'s
//! [`TallySink`](crate::stats::TallySink), which it holds and feeds: the
//! page's figures are the `fb stats --json` report's, made by the same
//! code from the same events. Beside it the sink keeps aggregates, never
//! events, so memory and the page stay bounded whatever the log's size:
//!
//! - [`timeline`]: decisions, outcomes and rewards per time window;
//! - [`propensity`]: the chosen actions' probabilities, their effective
//!   sample size, the smallest ones;
//! - [`actions`]: the chosen actions, per problem type and slot;
//! - [`delays`]: the time from decision to outcome;
//! - [`config`]: the configurations checkpoints put in force;
//! - [`header`]: the page's header and the problems found;
//! - [`page`]: the page itself ([`page::render`]), its charts drawn by the
//!   vendored uPlot (`assets/uplot/`), every chart with its table;
//! - [`policies`]: target policies' estimates (`--policy`), by `fb
//!   evaluate`'s own evaluation in the same pass;
//! - [`command`]: a run end to end ([`run()`]), for every face.

pub mod actions;
pub mod command;
pub mod config;
pub mod delays;
pub mod header;
pub mod html;
pub mod page;
pub mod policies;
pub mod propensity;
pub mod timeline;

use fb_join::JoinedEvent;

pub use command::{run, Page, PageOptions};

use crate::estimate::Sample;
use crate::stats::{Estimators, Tally, TallyMaker, TallySink, Target, BATCH};

/// What the report keeps of the kept events.
///
/// On one thread the sink lends its running total to the loop
/// ([`fb_join::Sink::first_batch`]) and each event is added to it, in log
/// order, as `fb stats` does. A batch made on a worker thread counts what
/// merges exactly (the stats tally's counts, the propensity bins, actions,
/// delays) and keeps what does not: the float sums' terms, and the time
/// windows' parts, which the sink adds event by event (a window's sums
/// also depend on when windows widen). The page is then the same bytes
/// for any number of threads.
#[derive(Default)]
pub struct Health {
    /// What `fb stats` keeps: its metrics and estimators.
    pub tally: Tally,
    /// Per time window.
    pub timeline: timeline::Timeline,
    /// The chosen actions' probabilities.
    pub propensities: propensity::Propensities,
    /// The chosen actions.
    pub actions: actions::Actions,
    /// Outcome delays.
    pub delays: delays::Delays,
    /// A worker's batch: what its events add to the windows and the
    /// weights' sums, in log order.
    additions: Vec<Addition>,
}

/// What a kept event adds that a worker's batch keeps for the sink.
#[derive(Debug, Clone, Copy)]
enum Addition {
    /// An event in the window of `secs`, and how many of the
    /// [`Addition::Sample`]s that follow are its.
    Event {
        secs: i64,
        counted: timeline::Counted,
        samples: u8,
    },
    /// A sample of the event before, for its window's estimators.
    Sample(Target, Sample),
    /// An inverse-propensity weight.
    Weight(f64),
}

impl Health {
    fn new(window: Option<i64>) -> Self {
        Self {
            delays: delays::Delays::with_window(window),
            ..Self::default()
        }
    }
}

/// Fills [`Health`] batches: the stats tally through `fb stats`'s own
/// maker, and the report's aggregates.
pub struct HealthMaker {
    tally: TallyMaker,
    window: Option<i64>,
    /// The day of the last event: most events fall on the one before's,
    /// whose start is then reused rather than converted again.
    day: fb_join::time::LastDay,
}

impl fb_join::Maker for HealthMaker {
    type Batch = Health;

    fn batch(&mut self) -> Health {
        Health::new(self.window)
    }

    fn add(&mut self, batch: &mut Health, ev: &JoinedEvent<'_>) {
        // The event's time, converted once for the timeline and delays.
        let day = self.day.of(&ev.time);
        let key = day.key(&ev.time);
        let (tally, maker) = (&mut batch.tally, &mut self.tally);
        if tally.is_lent() {
            // The stats tally's samples go to the event's window as
            // well: made once, for both.
            batch.timeline.add(key.0, |w| {
                w.count(timeline::Counted::of(ev));
                let estimators = &mut w.estimators;
                maker.add_also(tally, ev, |t, s| estimators.put_charted(t, s));
            });
            batch.propensities.add(ev);
        } else {
            let additions = &mut batch.additions;
            let at = additions.len();
            additions.push(Addition::Event {
                secs: key.0,
                counted: timeline::Counted::of(ev),
                samples: 0,
            });
            let mut samples = 0u8;
            maker.add_also(tally, ev, |t, s| {
                if Estimators::charted(t) {
                    additions.push(Addition::Sample(t, s));
                    samples = samples.saturating_add(1);
                }
            });
            if let Some(Addition::Event { samples: n, .. }) = additions.get_mut(at) {
                *n = samples;
            }
            batch
                .propensities
                .add_with(ev, |_, w| additions.push(Addition::Weight(w)));
        }
        batch.actions.add(ev);
        batch.delays.add(ev, key, &day);
    }

    fn full(&self, batch: &Health) -> bool {
        self.tally.full(&batch.tally) || batch.additions.len() >= BATCH
    }

    fn clear(&mut self, batch: &mut Health) {
        *batch = Health::new(self.window);
    }
}

/// The report's sink: the sum of every batch, in log order.
pub struct HealthSink {
    tally: TallySink,
    health: Health,
    window: Option<i64>,
}

impl HealthSink {
    /// A sink that counts outcome delays against the loop's join window
    /// (microseconds), when known.
    pub fn new(window: Option<i64>) -> Self {
        Self {
            tally: TallySink::default(),
            health: Health::new(window),
            window,
        }
    }

    /// Takes a batch, in log order ([`fb_join::Sink::take`], which
    /// cannot fail here).
    pub(crate) fn absorb(&mut self, batch: &mut Health) {
        let lent = batch.tally.is_lent();
        self.tally.absorb(&mut batch.tally);
        let h = &mut self.health;
        if lent {
            // The running total, back from one thread's loop.
            std::mem::swap(&mut h.timeline, &mut batch.timeline);
            std::mem::swap(&mut h.propensities, &mut batch.propensities);
            std::mem::swap(&mut h.actions, &mut batch.actions);
            std::mem::swap(&mut h.delays, &mut batch.delays);
            return;
        }
        h.propensities.merge(&batch.propensities);
        h.actions.merge(&batch.actions);
        h.delays.merge(&batch.delays);
        let mut additions = batch.additions.iter();
        while let Some(a) = additions.next() {
            match *a {
                Addition::Event {
                    secs,
                    counted,
                    samples,
                } => h.timeline.add(secs, |w| {
                    w.count(counted);
                    for a in additions.by_ref().take(usize::from(samples)) {
                        // Only charted samples were kept.
                        if let Addition::Sample(t, s) = *a {
                            w.estimators.put(t, s);
                        }
                    }
                }),
                Addition::Sample(..) => {}
                Addition::Weight(w) => h.propensities.weigh(w),
            }
        }
    }

    /// Lends the running total to one thread's loop.
    fn lend(&mut self, maker: &mut HealthMaker) -> Health {
        let h = &mut self.health;
        Health {
            tally: fb_join::Sink::first_batch(&mut self.tally, &mut maker.tally),
            timeline: std::mem::take(&mut h.timeline),
            propensities: std::mem::take(&mut h.propensities),
            actions: std::mem::take(&mut h.actions),
            delays: std::mem::take(&mut h.delays),
            additions: Vec::new(),
        }
    }

    /// What it gathered.
    pub fn into_health(self) -> Health {
        Health {
            tally: self.tally.0,
            ..self.health
        }
    }
}

impl fb_join::Sink for HealthSink {
    type Batch = Health;
    type Maker = HealthMaker;

    fn maker(&self) -> HealthMaker {
        HealthMaker {
            tally: TallyMaker,
            window: self.window,
            day: fb_join::time::LastDay::default(),
        }
    }

    fn first_batch(&mut self, maker: &mut HealthMaker) -> Health {
        self.lend(maker)
    }

    fn take(&mut self, batch: &mut Health) -> Result<(), fb_join::Error> {
        self.absorb(batch);
        Ok(())
    }
}

#[cfg(test)]
#[path = "threads_tests.rs"]
mod threads_tests;
