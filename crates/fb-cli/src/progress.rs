//! A progress bar on stderr, only when stderr is a terminal and the work
//! has taken more than a second (`FB_PROGRESS_AFTER_MS` sets another
//! delay, for tests).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Tracks bytes and events; draws once the work is slow enough to need it.
pub struct Progress {
    enabled: bool,
    start: Instant,
    total: Option<u64>,
    bar: Option<ProgressBar>,
    bytes: u64,
    events: u64,
    /// Calls since the bar was last looked at.
    calls: u32,
    /// Calls between looks at the clock.
    look_every: u32,
    /// Bytes added when the clock was last looked at.
    looked_at: u64,
    /// How long the work runs before the bar appears.
    after: Duration,
}

/// Calls to [`Progress::add`] between looks at the clock: one per message
/// cost a clock read, and a formatted message, per event.
const LOOK_EVERY: u32 = 1024;

/// Bytes between looks at the clock, however few the calls: a run on
/// several threads adds a batch (about a megabyte) at a time, and would
/// otherwise look only every gigabyte.
const LOOK_BYTES: u64 = 1 << 20;

impl Progress {
    /// `total` bytes when known; `quiet` turns it off. For callers that
    /// add often (per message).
    pub fn new(total: Option<u64>, quiet: bool) -> Self {
        let after = std::env::var("FB_PROGRESS_AFTER_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(Duration::from_secs(1), Duration::from_millis);
        Self {
            enabled: Self::draws(quiet),
            start: Instant::now(),
            total,
            bar: None,
            bytes: 0,
            events: 0,
            calls: 0,
            look_every: LOOK_EVERY,
            looked_at: 0,
            after,
        }
    }

    /// Whether a bar is drawn at all: on a terminal, unless `quiet`.
    pub fn draws(quiet: bool) -> bool {
        !quiet && std::io::stderr().is_terminal()
    }

    /// [`Progress::new`] for callers that add seldom (per megabyte written,
    /// per piece): every call looks at the clock.
    pub fn coarse(total: Option<u64>, quiet: bool) -> Self {
        Self {
            look_every: 1,
            ..Self::new(total, quiet)
        }
    }

    /// Adds read bytes and produced events.
    pub fn add(&mut self, bytes: u64, events: u64) {
        self.bytes += bytes;
        self.events += events;
        if !self.enabled {
            return;
        }
        self.calls += 1;
        if self.calls < self.look_every && self.bytes - self.looked_at < LOOK_BYTES {
            return;
        }
        self.calls = 0;
        self.looked_at = self.bytes;
        if self.bar.is_none() && self.start.elapsed() >= self.after {
            let bar = match self.total {
                Some(total) => ProgressBar::new(total),
                None => ProgressBar::new_spinner(),
            };
            // Rates are computed here from the true start: the bar itself
            // only appears after a second and would see a jump.
            let template = if self.total.is_some() {
                "{bar:30} {bytes}/{total_bytes} {msg}"
            } else {
                "{spinner} {bytes} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar.set_position(self.bytes);
            bar.set_message(self.message());
            // Drawn now, not at the next refresh: a short run shows it too.
            bar.tick();
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(self.bytes);
            bar.set_message(self.message());
        }
    }

    /// Events, throughput and, when the total is known, the time left.
    fn message(&self) -> String {
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let rate = self.bytes as f64 / secs;
        let mut text = format!(
            "{} events ({:.0}/s), {:.0} MB/s",
            self.events,
            self.events as f64 / secs,
            rate / 1e6
        );
        if let (Some(total), true) = (self.total, rate > 0.0) {
            let left = total.saturating_sub(self.bytes) as f64 / rate;
            let left = left.min(99.0 * 3600.0) as u64;
            text.push_str(&format!(
                ", ETA {}:{:02}:{:02}",
                left / 3600,
                left / 60 % 60,
                left % 60
            ));
        }
        text
    }

    /// Removes the bar.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
