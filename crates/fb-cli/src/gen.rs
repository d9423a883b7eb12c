//! `fb gen`: writes a synthetic joined log, deterministic from a seed.

use std::path::PathBuf;
use std::process::ExitCode;

use fb_join::{Problem, RewardFunction};
use fb_run::gen::RawStreams;
use fb_writer::synth::{GenConfig, Limit, RewardDist};

use crate::joinargs::named;
use fb_run::output::{Existing, How, Output};
use fb_run::Error;

/// Decisions written when neither `--events` nor `--size` is given.
const DEFAULT_EVENTS: u64 = 1000;

/// Arguments of `fb gen`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Kind of decisions.
    #[arg(long, value_name = "TYPE", default_value = "cb", value_parser = named::<Problem>(Problem::NAMES))]
    pub problem_type: Problem,
    /// Number of decisions (episodes for multistep) [default: 1000].
    #[arg(long, value_name = "N", conflicts_with = "size")]
    pub events: Option<u64>,
    /// Stop once the log is at least this big: bytes, K/KiB, M/MiB, G/GiB,
    /// T/TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000), e.g.
    /// 50MiB, 2G, 1MB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub size: Option<u64>,
    /// Actions per decision (per slot for slates).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub actions: usize,
    /// Distinct actions to draw from (per slot for slates), each with its
    /// own features; default four times --actions, at least 16. A pool
    /// much larger than the log makes actions that hardly ever repeat.
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub action_pool: u64,
    /// Slots per decision (ccb, slates).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub slots: usize,
    /// Steps per episode (multistep).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub steps: usize,
    /// Outcomes per decision (per step for multistep), activations apart.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub outcomes: usize,
    /// Outcome values: constant[:V], uniform[:LOW:HIGH] or bernoulli[:P].
    #[arg(
        long,
        value_name = "DIST",
        default_value = "bernoulli",
        allow_hyphen_values = true
    )]
    pub reward: RewardDist,
    /// Fraction of decisions with a deferred action.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0)]
    pub deferred: f64,
    /// Fraction of decisions that get an activation outcome.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0)]
    pub activated: f64,
    /// Apprentice learning mode (events and checkpoints).
    #[arg(long)]
    pub apprentice: bool,
    /// pass_probability of every event (pdrop = 1 - this).
    #[arg(long, value_name = "P", default_value_t = 1.0)]
    pub pass_probability: f32,
    /// Write actions once in DedupInfo events and refer to them as
    /// {"__aid":N} in contexts.
    #[arg(long)]
    pub dedup: bool,
    /// zstd-compress every event payload.
    #[arg(long)]
    pub zstd: bool,
    /// Decisions per REGULAR message (multistep: always one episode).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub events_per_message: usize,
    /// Write a CHECKPOINT before every N REGULAR messages (0: only one, at
    /// the start).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub checkpoint_every: u64,
    /// Reward function the checkpoints declare.
    #[arg(long, value_name = "F", default_value = "earliest", value_parser = named::<RewardFunction>(RewardFunction::NAMES))]
    pub reward_function: RewardFunction,
    /// Default reward the checkpoints declare.
    #[arg(
        long,
        value_name = "R",
        default_value_t = 0.0,
        allow_negative_numbers = true,
        value_parser = fb_run::options::parse_finite_f32
    )]
    pub default_reward: f32,
    /// Checkpoints ask joiners to use the client time.
    #[arg(long)]
    pub use_client_time: bool,
    /// Seed: the same arguments and seed give the same bytes.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Output file ("-" or absent: standard output, unless it is a terminal).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Also take the log apart into the raw streams a client would have
    /// written (`OUT-STEM.interactions.fb`, `.observations.fb`, and
    /// `.episodes.fb` for multistep), each in client time order, for
    /// `fb join`.
    #[arg(long)]
    pub raw_streams: bool,
    /// Replace the outputs if they exist (once each is complete).
    #[arg(long)]
    pub force: bool,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,
}

impl Args {
    fn config(&self) -> GenConfig {
        let limit = match (self.events, self.size) {
            (_, Some(bytes)) => Limit::Bytes(bytes),
            (Some(n), None) => Limit::Events(n),
            (None, None) => Limit::Events(DEFAULT_EVENTS),
        };
        GenConfig {
            problem: self.problem_type,
            limit,
            actions: self.actions,
            action_pool: self.action_pool,
            slots: self.slots,
            steps: self.steps,
            outcomes: self.outcomes,
            reward: self.reward,
            deferred: self.deferred,
            activated: self.activated,
            apprentice: self.apprentice,
            pass_probability: self.pass_probability,
            dedup: self.dedup,
            zstd: self.zstd,
            events_per_message: self.events_per_message,
            checkpoint_every: self.checkpoint_every,
            reward_function: self.reward_function.to_wire(),
            default_reward: self.default_reward,
            use_client_time: self.use_client_time,
            seed: self.seed,
        }
    }
}

/// Parses a size in bytes: `4096`, `512B`, binary multiples `64K`,
/// `64KiB`, `50M`, `50MiB`, `2G`, `2GiB`, `1T`, `1TiB`, or decimal ones
/// `1KB`, `1MB`, `1GB`, `1TB` (powers of 1000). Case is ignored.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "unknown size unit `{other}` in `{text}`: use bytes, K/KiB, M/MiB, G/GiB, \
                 T/TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000)"
            ))
        }
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size: expected a whole number, e.g. 50MiB"))?;
    n.checked_mul(scale)
        .ok_or_else(|| format!("size `{text}` is too large"))
}

/// Generates the log; exits 0, or returns why it could not.
pub fn run(args: &Args, global: &crate::Global) -> Result<ExitCode, Error> {
    let config = args.config();
    config.validate().map_err(|e| e.to_string())?;
    let to_stdout = args
        .output
        .as_deref()
        .is_none_or(|path| path.as_os_str() == "-");
    if args.raw_streams && to_stdout {
        return Err("--raw-streams writes files beside the log: give -o FILE".into());
    }
    let existing = Existing::forced(args.force);
    // Every output is refused before anything is written.
    let streams = match (args.raw_streams, args.output.as_deref()) {
        (true, Some(path)) => Some(RawStreams::beside(path, existing)?),
        _ => None,
    };
    let out = Output::create(args.output.as_deref(), &[], How::binary(existing))?;
    let target = out.target().to_string();
    let mut voice = crate::say::Voice::new(global.quiet).coarse();
    let summary = fb_run::gen::generate(&config, out, &mut voice)?;
    if !global.quiet {
        eprintln!(
            "fb gen: wrote {} bytes to {target}: {} messages ({} REGULAR, {} CHECKPOINT), \
             {} decisions, {} events",
            summary.bytes,
            summary.messages,
            summary.regular_messages,
            summary.checkpoints,
            summary.decisions,
            summary.events
        );
    }
    if let (Some(streams), Some(log)) = (streams, args.output.as_deref()) {
        let counts = streams.write(log, args.read.maps())?;
        if !global.quiet {
            eprintln!(
                "fb gen: {} interactions, {} observations, {} episode events written to {}.*.fb",
                counts.interactions,
                counts.observations,
                counts.episodes,
                log.with_extension("").display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        for (text, bytes) in [
            ("0", 0u64),
            ("4096", 4096),
            ("512B", 512),
            ("64KiB", 64 << 10),
            ("50MiB", 50 << 20),
            ("50mib", 50 << 20),
            ("2GiB", 2 << 30),
            ("1TiB", 1 << 40),
            (" 3 MiB ", 3 << 20),
            ("1M", 1 << 20),
            ("1m", 1 << 20),
            ("2K", 2 << 10),
            ("1MB", 1_000_000),
            ("3GB", 3_000_000_000),
            ("1kb", 1_000),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for bad in [
            "",
            "MiB",
            "1.5GiB",
            "50MiBs",
            "-1",
            "10 parsecs",
            "99999999999999TiB",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
