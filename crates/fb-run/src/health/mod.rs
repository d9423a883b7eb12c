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

use crate::stats::{Tally, TallyMaker, TallySink};

/// What the report keeps of the kept events.
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
}

impl fb_join::Maker for HealthMaker {
    type Batch = Health;

    fn batch(&mut self) -> Health {
        Health::new(self.window)
    }

    fn add(&mut self, batch: &mut Health, ev: &JoinedEvent<'_>) {
        self.tally.add(&mut batch.tally, ev);
        // The event's time, converted once for the timeline and delays.
        let key = fb_join::time::key(&ev.time);
        batch.timeline.add(ev, key.0);
        batch.propensities.add(ev);
        batch.actions.add(ev);
        batch.delays.add(ev, key);
    }

    fn full(&self, _: &Health) -> bool {
        false
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
        }
    }

    fn take(&mut self, batch: &mut Health) -> Result<(), fb_join::Error> {
        self.tally.take(&mut batch.tally)?;
        let h = &mut self.health;
        h.timeline.merge(&batch.timeline);
        h.propensities.merge(&batch.propensities);
        h.actions.merge(&batch.actions);
        h.delays.merge(&batch.delays);
        Ok(())
    }
}
