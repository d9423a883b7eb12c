//! The evaluation sink: joined events become compact records where they
//! are made; the sink takes them in log order, asks every target policy
//! for its probability of the logged actions (a prediction file must be
//! read in that order), and adds them to the tallies: the whole run's and
//! each time window's.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::cats::Cats;
use super::estimators::{Bandit, PseudoInverse, Slots};
use super::multislot::Multislot;
use super::policies::{Choice, Predictions, Spec, Target};
use super::records::{Rec, RecordMaker, Records, SlotRec};
use crate::Error;

/// Slots given a PDIS estimate of their own; later ones are left out (a
/// damaged or odd log could claim thousands).
pub const MAX_SLOTS: usize = 16;

/// The problem types with estimates (CA only with CATS parameters, else
/// counted, not estimated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Contextual bandit.
    Cb,
    /// Multistep steps.
    Multistep,
    /// Conditional contextual bandit.
    Ccb,
    /// Slates.
    Slates,
    /// Continuous actions, through the CATS transformer.
    Ca,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 5] = [Kind::Cb, Kind::Multistep, Kind::Ccb, Kind::Slates, Kind::Ca];

    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cb => "cb",
            Kind::Multistep => "multistep",
            Kind::Ccb => "ccb",
            Kind::Slates => "slates",
            Kind::Ca => "ca",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Time windows for `--by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// Hours (UTC).
    Hour,
    /// Days (UTC).
    Day,
}

impl By {
    /// The names `--by` takes.
    pub const NAMES: &'static [&'static str] = &["hour", "day"];

    /// The window's length in seconds.
    pub fn seconds(self) -> i64 {
        match self {
            By::Hour => 3600,
            By::Day => 86_400,
        }
    }
}

impl std::str::FromStr for By {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hour" => Ok(By::Hour),
            "day" => Ok(By::Day),
            _ => Err(format!("`{s}` is not a window: hour or day")),
        }
    }
}

/// The tallies of one problem type: per target policy, in the order the
/// policies were given.
#[derive(Debug, Clone)]
pub struct KindTally {
    /// Decisions estimated from.
    pub decisions: u64,
    /// Learnable decisions left out: a logged probability or
    /// pass_probability of 0 (an infinite weight), or no action.
    pub left_out: u64,
    /// The smallest logged probability of a taken action (of any slot).
    pub min_p: f64,
    /// CB, multistep: every decision; CCB: the first slot; CA: every
    /// decision, with densities for probabilities.
    pub bandit: Vec<Bandit>,
    /// CCB: per-slot PDIS Cressie-Read.
    pub slots: Vec<Slots>,
    /// CCB: the multislot estimator, per slot id.
    pub multislot: Vec<Multislot>,
    /// Slates: the pseudo-inverse estimator.
    pub slates: Vec<PseudoInverse>,
}

impl KindTally {
    fn new(policies: usize) -> Self {
        Self {
            decisions: 0,
            left_out: 0,
            min_p: f64::INFINITY,
            bandit: vec![Bandit::default(); policies],
            slots: vec![Slots::default(); policies],
            multislot: vec![Multislot::default(); policies],
            slates: vec![PseudoInverse::default(); policies],
        }
    }
}

/// The tallies of a run or of one time window.
#[derive(Debug, Clone)]
pub struct Tallies {
    /// Per problem type, as [`Kind::ALL`].
    pub kinds: Vec<KindTally>,
    /// CA decisions not estimated (no CATS parameters).
    pub ca: u64,
    /// Decisions that are not learnable (skip-learn), not estimated.
    pub not_learnable: u64,
}

impl Tallies {
    fn new(policies: usize) -> Self {
        Self {
            kinds: Kind::ALL.iter().map(|_| KindTally::new(policies)).collect(),
            ca: 0,
            not_learnable: 0,
        }
    }

    /// The tally of `kind`.
    pub fn kind(&self, kind: Kind) -> Option<&KindTally> {
        self.kinds.get(kind.index())
    }
}

/// A target policy with what it reads.
struct Policy {
    spec: Spec,
    predictions: Option<Predictions>,
}

/// The evaluation of target policies over joined events: a
/// [`fb_join::Sink`].
pub struct Evaluation {
    policies: Vec<Policy>,
    /// The whole run's tallies.
    pub total: Tallies,
    by: Option<By>,
    /// Per window start (seconds since 1970), with `--by`.
    pub windows: BTreeMap<i64, Tallies>,
    /// Windows of a second width, kept in the same pass
    /// ([`Evaluation::also_by`]): each window's tally is added in log
    /// order exactly as an evaluation `--by` that width adds it.
    also: Option<(By, BTreeMap<i64, Tallies>)>,
    events: u64,
    failure: Arc<Mutex<Option<Error>>>,
    example: Vec<Vec<(u64, f64)>>,
    /// CATS parameters: CA decisions are estimated only with them.
    cats: Option<Cats>,
    scratch: Scratch,
    /// The one-thread loop's last batch, emptied (`Sink::recycle`): the
    /// next input's first batch starts with its room, so a folder of
    /// small logs does not grow a batch from nothing for each.
    spare_batch: Option<Records>,
}

/// Buffers of [`add`], kept across events so that adding one allocates
/// nothing.
#[derive(Debug, Default)]
struct Scratch {
    /// Per slot, the logged probability of the action taken.
    p_logs: Vec<f64>,
    /// CCB: per slot `(p_log, r, p_pred)`.
    per: Vec<(f64, f64, f64)>,
    /// Slates: per slot `(p_log, p_pred)`.
    per_slate: Vec<(f64, f64)>,
}

impl Evaluation {
    /// An evaluation of the logged policy and `specs`, with windows when
    /// `by` says. Prediction files are opened here.
    pub fn new(specs: &[Spec], by: Option<By>) -> Result<Self, Error> {
        let mut policies = vec![Policy {
            spec: Spec::Logged,
            predictions: None,
        }];
        for s in specs {
            if *s == Spec::Logged {
                continue;
            }
            let predictions = match s {
                Spec::Predictions(path) => Some(Predictions::open(path)?),
                _ => None,
            };
            policies.push(Policy {
                spec: s.clone(),
                predictions,
            });
        }
        let n = policies.len();
        Ok(Self {
            policies,
            total: Tallies::new(n),
            by,
            windows: BTreeMap::new(),
            also: None,
            events: 0,
            failure: Arc::default(),
            example: Vec::new(),
            cats: None,
            scratch: Scratch::default(),
            spare_batch: None,
        })
    }

    /// Estimates CA decisions with these CATS parameters (without them,
    /// CA decisions are counted only).
    pub fn with_cats(mut self, cats: Option<Cats>) -> Self {
        self.cats = cats;
        self
    }

    /// Keeps windows `by` wide too, in the same pass: the targets and the
    /// whole run's tallies are computed once for both widths.
    /// [`Evaluation::show_by`] then picks the windows a report shows.
    pub fn also_by(mut self, by: By) -> Self {
        self.also = Some((by, BTreeMap::new()));
        self
    }

    /// Makes the windows `by` wide the ones [`Evaluation::windows`] holds
    /// (and a report shows), when they were kept ([`Evaluation::also_by`]):
    /// the evaluation then reports as one run `--by` that width. Returns
    /// whether it does.
    pub fn show_by(&mut self, by: By) -> bool {
        if self.by == Some(by) {
            return true;
        }
        match &mut self.also {
            Some((also, windows)) if *also == by => {
                std::mem::swap(windows, &mut self.windows);
                let shown = self.by.replace(by);
                *also = shown.unwrap_or(by);
                true
            }
            _ => false,
        }
    }

    /// The CATS parameters, if given.
    pub fn cats(&self) -> Option<Cats> {
        self.cats
    }

    /// Replaces the prediction reader of policy `index` (tests, Python).
    pub fn set_predictions(&mut self, index: usize, p: Predictions) {
        if let Some(pol) = self.policies.get_mut(index) {
            pol.predictions = Some(p);
        }
    }

    /// Where the sink leaves the error that stopped a run (the pipeline
    /// only knows its own errors).
    pub fn failure(&self) -> Arc<Mutex<Option<Error>>> {
        Arc::clone(&self.failure)
    }

    /// The policies' names, the logged policy first.
    pub fn names(&self) -> Vec<String> {
        self.policies.iter().map(|p| p.spec.to_string()).collect()
    }

    /// Events seen.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Ends the run: every prediction file must be read to its end.
    pub fn finish(&mut self) -> Result<(), Error> {
        let events = self.events;
        for p in &mut self.policies {
            if let Some(pred) = p.predictions.as_mut() {
                pred.finish(events)?;
            }
        }
        Ok(())
    }

    /// The target of policy `i` at one event's slots, into `out`.
    fn targets(
        &mut self,
        i: usize,
        kind: Option<Kind>,
        id: &str,
        choices: &[Choice<'_>],
        ca: (f64, f64),
        out: &mut Vec<Target>,
    ) -> Result<(), Error> {
        out.clear();
        let index = self.events;
        if let (Some(Kind::Ca), Some(cats)) = (kind, self.cats) {
            return self.ca_target(i, cats, id, ca, out);
        }
        let Some(pol) = self.policies.get_mut(i) else {
            return Ok(());
        };
        let wrong = |what: &str| {
            Error::Usage(format!(
                "the policy {} is for {what}: event {id} is a {} decision (keep only the problem \
                 types it is for with --only)",
                pol.spec,
                kind.map_or("CA", |k| k.name())
            ))
        };
        match &pol.spec {
            Spec::Logged => out.extend(choices.iter().map(Choice::logged)),
            Spec::Baseline => out.extend(choices.iter().map(|c| c.always(c.baseline))),
            Spec::Uniform => out.extend(choices.iter().map(Choice::uniform)),
            Spec::ConstantValue(_) => {
                return Err(wrong("CA decisions (with --cats)"));
            }
            Spec::Constant(k) => {
                if !matches!(kind, Some(Kind::Cb | Kind::Multistep)) {
                    return Err(wrong("CB and multistep decisions (CA with --cats)"));
                }
                out.extend(choices.iter().map(|c| {
                    let a = if c.actions.contains(k) { *k } else { 1 };
                    c.always(a)
                }));
            }
            Spec::Given(_) => {
                return Err(Error::Usage(format!(
                    "the policy {} gives its probabilities through add_given, not along a run",
                    pol.spec
                )))
            }
            Spec::Predictions(_) => {
                if matches!(kind, None | Some(Kind::Ca)) {
                    return Err(wrong(
                        "CB, multistep, CCB and Slates decisions (CA with --cats)",
                    ));
                }
                let Some(pred) = pol.predictions.as_mut() else {
                    return Ok(());
                };
                let line = pred.next_example(id, index, choices.len(), &mut self.example)?;
                for (c, dist) in choices.iter().zip(self.example.iter_mut()) {
                    // CB ids count from 1, VW's action indices from 0;
                    // CCB indices are into the event's actions, Slates
                    // indices into the slot's.
                    let shift = u64::from(matches!(kind, Some(Kind::Cb | Kind::Multistep)));
                    let offered = match kind {
                        Some(Kind::Ccb) => choices.first().map_or(0, |f| f.actions.len()),
                        _ => c.actions.len(),
                    } as u64;
                    if let Some(&(a, _)) = dist.iter().find(|(a, _)| *a >= offered) {
                        return Err(Error::Usage(format!(
                            "{} line {line} (event {id}): action {a} is not among the event's \
                             {offered} actions (VW counts them from 0)",
                            pred.path()
                        )));
                    }
                    // In place: the example is read afresh for each event.
                    for (a, _) in dist.iter_mut() {
                        *a += shift;
                    }
                    out.push(c.distribution(dist));
                }
            }
        }
        Ok(())
    }

    /// The target density of policy `i` at a CA decision `(action,
    /// pdf_value)`, into `out`.
    fn ca_target(
        &mut self,
        i: usize,
        cats: Cats,
        id: &str,
        (action, pdf): (f64, f64),
        out: &mut Vec<Target>,
    ) -> Result<(), Error> {
        let index = self.events;
        let Some(pol) = self.policies.get_mut(i) else {
            return Ok(());
        };
        let p = match &pol.spec {
            Spec::Logged => pdf,
            Spec::Baseline => cats.density(action, cats.baseline()),
            Spec::Uniform => cats.uniform(),
            Spec::Constant(_) | Spec::ConstantValue(_) => {
                cats.density(action, pol.spec.constant_value().unwrap_or(0.0))
            }
            Spec::Predictions(_) => match pol.predictions.as_mut() {
                Some(pred) => cats.density(action, pred.next_action(id, index)?),
                None => return Ok(()),
            },
            Spec::Given(_) => {
                return Err(Error::Usage(format!(
                    "the policy {} gives its probabilities through add_given, not along a run",
                    pol.spec
                )))
            }
        };
        out.push(Target {
            p,
            unsupported: 0.0,
        });
        Ok(())
    }

    /// Adds one learnable CB or multistep decision whose target
    /// probabilities the caller gives (a Python callable): its time, the
    /// logged probability of the action taken, its reward, the drop
    /// probability, and per policy after the logged one that policy's
    /// probability of the logged action.
    pub fn add_given(
        &mut self,
        kind: Kind,
        seconds: i64,
        p_log: f32,
        reward: f64,
        p_drop: f64,
        given: &[f64],
    ) -> Result<(), Error> {
        if !matches!(kind, Kind::Cb | Kind::Multistep) {
            return Err(Error::Usage(format!(
                "probabilities given by the caller are for CB and multistep decisions, not {}",
                kind.name()
            )));
        }
        if given.len() + 1 != self.policies.len() {
            return Err(Error::Usage(format!(
                "{} probabilities given for {} policies",
                given.len(),
                self.policies.len() - 1
            )));
        }
        if let Some(q) = given.iter().find(|q| !(0.0..=1.0).contains(*q)) {
            return Err(Error::Usage(format!("{q} is not a probability (0 to 1)")));
        }
        let rec = Rec {
            kind: Some(kind),
            id: (0, 0),
            seconds,
            learnable: true,
            p_drop,
            reward,
            slots: (0, 1),
            ca: (0.0, 0.0),
        };
        let slots = [SlotRec {
            start: 0,
            end: 1,
            reward,
            baseline: 1,
            id: (0, 0),
        }];
        let probs = [p_log];
        let choices = [Choice {
            actions: &[1],
            probabilities: &probs,
            baseline: 1,
        }];
        let mut targets = vec![vec![Target {
            p: f64::from(p_log),
            unsupported: 0.0,
        }]];
        targets.extend(given.iter().map(|&p| {
            vec![Target {
                p,
                unsupported: 0.0,
            }]
        }));
        self.events += 1;
        let window = self
            .by
            .map(|by| seconds.div_euclid(by.seconds()) * by.seconds());
        let n = self.policies.len();
        let scratch = &mut self.scratch;
        add(
            &mut self.total,
            &rec,
            &slots,
            "",
            &choices,
            &targets,
            scratch,
        );
        if let Some(w) = window {
            let t = self.windows.entry(w).or_insert_with(|| Tallies::new(n));
            add(t, &rec, &slots, "", &choices, &targets, scratch);
        }
        if let Some((by, windows)) = &mut self.also {
            let w = seconds.div_euclid(by.seconds()) * by.seconds();
            let t = windows.entry(w).or_insert_with(|| Tallies::new(n));
            add(t, &rec, &slots, "", &choices, &targets, scratch);
        }
        Ok(())
    }

    fn take_one<'b>(
        &mut self,
        b: &'b Records,
        rec: &Rec,
        targets: &mut Vec<Vec<Target>>,
        choices: &mut Vec<Choice<'b>>,
    ) -> Result<(), Error> {
        let id = b
            .ids
            .get(rec.id.0 as usize..rec.id.1 as usize)
            .unwrap_or("");
        let slots = b
            .slots
            .get(rec.slots.0 as usize..rec.slots.1 as usize)
            .unwrap_or(&[]);
        // Buffers kept across events: no allocation per event.
        choices.clear();
        choices.extend(slots.iter().map(|s| {
            Choice {
                actions: b
                    .actions
                    .get(s.start as usize..s.end as usize)
                    .unwrap_or(&[]),
                probabilities: b.probs.get(s.start as usize..s.end as usize).unwrap_or(&[]),
                baseline: s.baseline,
            }
        }));
        let choices: &[Choice<'b>] = choices;
        // Without CATS parameters a CA decision is counted only.
        let mut rec = *rec;
        if rec.kind == Some(Kind::Ca) && self.cats.is_none() {
            rec.kind = None;
        }
        let rec = &rec;
        targets.resize_with(self.policies.len(), Vec::new);
        for (i, t) in targets.iter_mut().enumerate() {
            self.targets(i, rec.kind, id, choices, rec.ca, t)?;
        }
        self.events += 1;
        let window = self
            .by
            .map(|by| rec.seconds.div_euclid(by.seconds()) * by.seconds());
        let n = self.policies.len();
        let scratch = &mut self.scratch;
        let mut add = |t: &mut Tallies| add(t, rec, slots, &b.slot_ids, choices, targets, scratch);
        add(&mut self.total);
        if let Some(w) = window {
            add(self.windows.entry(w).or_insert_with(|| Tallies::new(n)));
        }
        if let Some((by, windows)) = &mut self.also {
            let w = rec.seconds.div_euclid(by.seconds()) * by.seconds();
            add(windows.entry(w).or_insert_with(|| Tallies::new(n)));
        }
        Ok(())
    }
}

/// Adds one event to `t`.
fn add(
    t: &mut Tallies,
    rec: &Rec,
    slots: &[SlotRec],
    slot_ids: &str,
    choices: &[Choice<'_>],
    targets: &[Vec<Target>],
    scratch: &mut Scratch,
) {
    let Some(kind) = rec.kind else {
        t.ca += 1;
        return;
    };
    if !rec.learnable {
        t.not_learnable += 1;
        return;
    }
    let Some(k) = t.kinds.get_mut(kind.index()) else {
        return;
    };
    if kind == Kind::Ca {
        let p = rec.ca.1;
        // NaN fails both tests: left out too.
        if !(p > 0.0 && rec.p_drop < 1.0) {
            k.left_out += 1;
            return;
        }
        k.decisions += 1;
        k.min_p = k.min_p.min(p);
        for (b, t) in k.bandit.iter_mut().zip(targets) {
            if let Some(t) = t.first() {
                b.add(p, rec.reward, t.p, rec.p_drop, t.unsupported);
            }
        }
        return;
    }
    let Scratch {
        p_logs,
        per,
        per_slate,
    } = scratch;
    p_logs.clear();
    p_logs.extend(
        choices
            .iter()
            .map(|c| c.probabilities.first().map_or(0.0, |&p| f64::from(p))),
    );
    let p_logs: &[f64] = p_logs;
    // NaN fails both tests: left out too.
    let usable = p_logs.iter().all(|&p| p > 0.0) && rec.p_drop < 1.0;
    if choices.is_empty() || !usable {
        k.left_out += 1;
        return;
    }
    k.decisions += 1;
    k.min_p = p_logs.iter().fold(k.min_p, |m, &p| m.min(p));
    for (i, ts) in targets.iter().enumerate() {
        match kind {
            Kind::Cb | Kind::Multistep | Kind::Ccb | Kind::Ca => {
                if let (Some(b), Some(t), Some(s), Some(&p)) = (
                    k.bandit.get_mut(i),
                    ts.first(),
                    slots.first(),
                    p_logs.first(),
                ) {
                    b.add(p, s.reward, t.p, rec.p_drop, t.unsupported);
                }
                if kind == Kind::Ccb {
                    per.clear();
                    per.extend(
                        p_logs
                            .iter()
                            .zip(slots)
                            .zip(ts)
                            .map(|((&p, s), t)| (p, s.reward, t.p)),
                    );
                    if let Some(s) = k.slots.get_mut(i) {
                        s.add(per, rec.p_drop, MAX_SLOTS);
                    }
                    if let Some(m) = k.multislot.get_mut(i) {
                        let named =
                            per.iter()
                                .zip(slots)
                                .enumerate()
                                .map(|(n, (&(p, r, q), s))| {
                                    let id = slot_ids
                                        .get(s.id.0 as usize..s.id.1 as usize)
                                        .unwrap_or("");
                                    (slot_name(id, n), p, r, q)
                                });
                        m.add(named, rec.p_drop);
                    }
                }
            }
            Kind::Slates => {
                per_slate.clear();
                per_slate.extend(p_logs.iter().zip(ts).map(|(&p, t)| (p, t.p)));
                if let Some(s) = k.slates.get_mut(i) {
                    s.add(per_slate, rec.reward);
                }
            }
        }
    }
}

/// Names of the slots without an id: `#N` for position N.
const POSITIONS: [&str; MAX_SLOTS] = [
    "#0", "#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8", "#9", "#10", "#11", "#12", "#13", "#14",
    "#15",
];

/// A slot's id in the multislot estimator: its own, else its position
/// (slots past [`MAX_SLOTS`] without an id share the name `#N+`).
fn slot_name(id: &str, position: usize) -> &str {
    if !id.is_empty() {
        return id;
    }
    POSITIONS.get(position).copied().unwrap_or("#16+")
}

impl fb_join::Sink for Evaluation {
    type Batch = Records;
    type Maker = RecordMaker;

    fn maker(&self) -> RecordMaker {
        RecordMaker
    }

    fn first_batch(&mut self, maker: &mut RecordMaker) -> Records {
        self.spare_batch
            .take()
            .unwrap_or_else(|| fb_join::Maker::batch(maker))
    }

    fn recycle(&mut self, _: RecordMaker, mut batch: Records) {
        batch.clear();
        self.spare_batch = Some(batch);
    }

    fn batches_may_join(&self) -> bool {
        // Each record is taken alone, in log order (its ids and slots are
        // ranges of its own batch): the same sums however records are cut
        // into batches.
        true
    }

    fn work_is_light(&self) -> bool {
        // A worker copies what the estimates need of each event; the sums
        // are added on the sink's thread.
        true
    }

    fn take(&mut self, batch: &mut Records) -> Result<(), fb_join::Error> {
        let batch: &Records = batch;
        let mut targets = Vec::new();
        let mut choices = Vec::new();
        for rec in &batch.recs {
            if let Err(e) = self.take_one(batch, rec, &mut targets, &mut choices) {
                if let Ok(mut f) = self.failure.lock() {
                    f.get_or_insert(e);
                }
                return Err(fb_join::Error::Write {
                    written: 0,
                    source: std::io::Error::other("the evaluation stopped"),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::report::report_json;

    /// One evaluation keeping windows of an hour and of a day reports,
    /// for either width shown, what an evaluation by that width alone
    /// reports: the same sums, to the bit.
    #[test]
    fn windows_of_two_widths_in_one_pass_are_each_widths_own() {
        let specs = [Spec::Given("q".into())];
        let mut both = Evaluation::new(&specs, Some(By::Hour))
            .unwrap()
            .also_by(By::Day);
        let mut hourly = Evaluation::new(&specs, Some(By::Hour)).unwrap();
        let mut daily = Evaluation::new(&specs, Some(By::Day)).unwrap();
        // Three days, events every 37 minutes, rewards and
        // probabilities that do not sum exactly.
        for i in 0..117i64 {
            let (p, r, q) = (
                0.1 + (i % 7) as f32 / 9.0,
                (i % 5) as f64 / 3.0,
                (i % 3) as f64 / 7.0,
            );
            for ev in [&mut both, &mut hourly, &mut daily] {
                ev.add_given(Kind::Cb, 86_400 * 19_000 + i * 37 * 60, p, r, 0.1, &[q])
                    .unwrap();
            }
        }
        for (name, by, want) in [
            ("hour", By::Hour, &hourly),
            ("day", By::Day, &daily),
            ("hour again", By::Hour, &hourly),
        ] {
            assert!(both.show_by(by), "{name}");
            assert!(want.windows.len() > 1, "{name}: several windows");
            assert_eq!(report_json(&both), report_json(want), "{name}");
        }
    }
}
