//! `fb join`: the client's raw streams joined into a joined log (the work
//! is `fb_run::join`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use fb_format::{Problem, RewardFunction};
use fb_join::rawjoin::{Report, Side, WentBack};
use fb_join::LearningMode;
use fb_run::join::{parse_duration, show_duration, show_time, Request, Stamp};
use fb_run::output::Existing;
use fb_run::Error;

use crate::joinargs::named;
use crate::Global;

/// Arguments of `fb join`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Interaction streams (decisions, multistep steps, DedupInfo events).
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    pub interactions: Vec<PathBuf>,

    /// Observation streams (outcomes, activations).
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    pub observations: Vec<PathBuf>,

    /// Multistep episode streams.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub episodes: Vec<PathBuf>,

    /// The joined log to write.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,

    /// The experimental unit duration (`30s`, `10m`, `2h`, `1d`): an
    /// observation joins only within this time after its interaction. By
    /// default every observation joins its interaction wherever it is.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub eud: Option<i64>,

    /// How much earlier than its interaction an observation may be, and
    /// how far out of time order the streams may be (with `--eud`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "0s")]
    pub skew: i64,

    /// Write the observations that joined nothing here, as a raw stream.
    #[arg(long, value_name = "FILE")]
    pub unjoined: Option<PathBuf>,

    /// Replace OUT (and the --unjoined file) if they exist, once complete.
    #[arg(long)]
    pub force: bool,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,

    /// Read on past damage: after a batch that does not verify, or from
    /// the next whole batch after damaged framing; what is skipped is
    /// reported.
    #[arg(long)]
    pub recover: bool,

    /// Largest REGULAR message (a decision with its observations is never
    /// split, so one larger group makes a larger message).
    #[arg(long, value_name = "SIZE", value_parser = crate::gen::parse_size, default_value = "1MiB")]
    pub max_message_size: u64,

    /// The problem type in the checkpoint (default: the first decision's).
    #[arg(long, value_name = "TYPE", value_parser = named::<Problem>(Problem::NAMES))]
    pub problem_type: Option<Problem>,

    /// The reward function in the checkpoint.
    #[arg(long, value_name = "F", default_value = "earliest", value_parser = named::<RewardFunction>(RewardFunction::NAMES))]
    pub reward_function: RewardFunction,

    /// The default reward in the checkpoint.
    #[arg(
        long,
        value_name = "R",
        default_value_t = 0.0,
        allow_negative_numbers = true,
        value_parser = fb_run::options::parse_finite_f32
    )]
    pub default_reward: f32,

    /// The learning mode in the checkpoint.
    #[arg(long, value_name = "MODE", default_value = "online", value_parser = named::<LearningMode>(LearningMode::NAMES))]
    pub learning_mode: LearningMode,

    /// The checkpoint asks converters to use the client time.
    #[arg(long)]
    pub use_client_time: bool,

    /// Which time becomes each joined event's timestamp (the time
    /// converters write and compare): `client`, its client time (the time
    /// of the join for an event without one, counted), or `join`, the
    /// time of the join for every event.
    #[arg(long, value_name = "TIME", default_value = "client", value_parser = named::<Stamp>(Stamp::NAMES))]
    pub timestamp: Stamp,
}

/// Says where a stream goes back in time by more than the skew, and what
/// to do.
fn warn_went_back(w: &WentBack, file: &str, skew: i64) {
    let back = w.latest.saturating_sub(w.time);
    let enough = (w.furthest as f64 / 1e6).ceil();
    eprintln!(
        "fb: warning: {file}: batch {} at byte {}: event `{}` at {} is {} earlier than an event \
         before it in the stream ({}), more than --skew {}: the stream goes back in time \
         ({} in this file, the furthest by {}); an observation whose group was handed out \
         before it came counts as late, an interaction that comes after its observations \
         misses them; --skew {enough}s joins them (the window then holds that much more)",
        w.message,
        w.offset,
        w.event_id,
        show_time(w.time),
        show_duration(back),
        show_time(w.latest),
        show_duration(skew),
        fb_run::plural(w.events, "event"),
        show_duration(w.furthest),
    );
}

/// The summary of a join on standard error.
fn summary(report: &Report, unstamped: u64, output: &str, bytes: usize, secs: f64) {
    eprintln!(
        "fb: {} ({} interactions, {} episode events, {} DedupInfo) joined with {} of \
         {} observations; unjoined: {} late, {} early, {} orphan; most groups open at once {}; \
         {output} in {secs:.2} s ({:.0} MB/s of input)",
        fb_run::plural(report.groups, "group"),
        report.interactions,
        report.episodes,
        report.dedup,
        report.joined,
        report.observations,
        report.late,
        report.early,
        report.orphans,
        report.most_pending,
        bytes as f64 / 1e6 / secs.max(1e-6),
    );
    if report.late + report.early + report.orphans > 0 {
        eprintln!(
            "fb:   late: came after their interaction's group was handed out (after --eud, \
             or their stream went back in time); early: before their interaction by more \
             than --skew; orphan: no interaction in the input has their id"
        );
    }
    if unstamped > 0 {
        eprintln!(
            "fb:   {} without client time stamped with the time of the join",
            fb_run::plural(unstamped, "event")
        );
    }
}

/// Joins; exit 0, or 1 when an input was damaged.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let started = Instant::now();
    let mut paths = Vec::new();
    for (side, files) in [
        (Side::Interactions, &args.interactions),
        (Side::Episodes, &args.episodes),
        (Side::Observations, &args.observations),
    ] {
        for path in files {
            paths.push((side, path.clone()));
        }
    }
    let name = |k: usize| {
        paths
            .get(k)
            .map_or("?".into(), |(_, p)| p.display().to_string())
    };
    let request = Request {
        problem_type: args.problem_type,
        reward_function: args.reward_function,
        default_reward: args.default_reward,
        learning_mode: args.learning_mode,
        use_client_time: args.use_client_time,
        eud: args.eud,
        skew: args.skew,
        recover: args.recover,
        timestamp: args.timestamp,
        max_message_size: args.max_message_size,
        existing: Existing::forced(args.force),
        maps: args.read.maps(),
    };
    let mut voice = crate::say::Voice::new(global.quiet);
    let joined = fb_run::join::join(
        &request,
        &paths,
        &args.output,
        args.unjoined.as_deref(),
        &mut voice,
    )?;
    let report = &joined.report;
    for d in &report.damage {
        let then = match d.resumed_at {
            Some(at) => format!("skipped; read on from byte {at}"),
            None if args.recover => "nothing readable after it".to_string(),
            None => "the rest of this input is not read (--recover reads on past damage)".into(),
        };
        eprintln!("fb: {}: {}; {then}", name(d.input), d.error);
    }
    if let Some(partial) = &joined.partial {
        eprintln!(
            "fb: the run ended in error: {} was left as it was; what was joined before the \
             damage is in {}",
            args.output.display(),
            partial.display()
        );
    }
    if !global.quiet {
        for w in &report.went_back {
            warn_went_back(w, &name(w.input), args.skew);
        }
        summary(
            report,
            joined.unstamped,
            &args.output.display().to_string(),
            joined.bytes as usize,
            started.elapsed().as_secs_f64(),
        );
    }
    Ok(if report.damage.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
