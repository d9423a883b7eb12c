//! `fb convert`: joined logs to DSJSON.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use fb_join::{
    Compat, Joiner, LearningMode, Options, Overrides, Problem, RewardFunction, StepTransform,
};

/// Arguments of `fb convert`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Joined logs to convert, read in order as one stream.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// Write the DSJSON here instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// Reproduce the reference converter exactly (`reference`), quirks
    /// included, or behave sanely (`sane`, the default).
    #[arg(long, value_name = "MODE", default_value = "sane", value_parser = parse_compat)]
    pub compat: Compat,

    /// Reward function, overriding every checkpoint:
    /// earliest|average|median|sum|min|max.
    #[arg(long, value_parser = parse_reward_function)]
    pub reward_function: Option<RewardFunction>,

    /// Reward of a decision without outcomes, overriding every checkpoint.
    #[arg(long, allow_negative_numbers = true)]
    pub default_reward: Option<f32>,

    /// Learning mode, overriding every checkpoint: online|apprentice|loggingonly.
    #[arg(long, value_parser = parse_learning_mode)]
    pub learning_mode: Option<LearningMode>,

    /// Problem type, overriding every checkpoint: cb|ccb|slates|ca.
    #[arg(long, value_parser = parse_problem)]
    pub problem_type: Option<Problem>,

    /// Use client timestamps instead of enqueued ones (true|false),
    /// overriding every checkpoint.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub use_client_time: Option<bool>,

    /// Join multistep episodes.
    #[arg(long)]
    pub multistep: bool,

    /// Multistep reward transform: suffix_mean|suffix_sum|identity.
    #[arg(long, default_value = "suffix_mean", value_parser = parse_transform)]
    pub multistep_reward: StepTransform,

    /// Replace `{"__aid":N}` action references with the cached action JSON.
    #[arg(long)]
    pub inline_dedup: bool,

    /// Print nothing on standard error but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

fn parse_compat(s: &str) -> Result<Compat, String> {
    match s {
        "reference" => Ok(Compat::Reference),
        "sane" | "default" => Ok(Compat::Sane),
        _ => Err("expected `reference` or `sane`".into()),
    }
}

fn parse_reward_function(s: &str) -> Result<RewardFunction, String> {
    RewardFunction::parse(s).ok_or_else(|| "expected earliest|average|median|sum|min|max".into())
}

fn parse_learning_mode(s: &str) -> Result<LearningMode, String> {
    LearningMode::parse(s).ok_or_else(|| "expected online|apprentice|loggingonly".into())
}

fn parse_problem(s: &str) -> Result<Problem, String> {
    Problem::parse(s).ok_or_else(|| "expected cb|ccb|slates|ca|multistep".into())
}

fn parse_transform(s: &str) -> Result<StepTransform, String> {
    StepTransform::parse(s).ok_or_else(|| "expected suffix_mean|suffix_sum|identity".into())
}

/// Converts; exit 0 clean, 1 when input was damaged (output still written
/// for everything readable), 2 for usage or I/O errors.
pub fn run(args: &Args) -> Result<ExitCode, String> {
    let opts = Options {
        overrides: Overrides {
            reward_function: args.reward_function,
            default_reward: args.default_reward,
            learning_mode: args.learning_mode,
            problem_type: args.problem_type,
            use_client_time: args.use_client_time,
        },
        compat: args.compat,
        multistep: args.multistep,
        multistep_reward: args.multistep_reward,
        inline_dedup: args.inline_dedup,
        ..Options::default()
    };
    let sink: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(
            File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?,
        ),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let mut joiner = Joiner::new(opts);
    let mut damaged = false;
    let mut messages = 0;
    for input in &args.inputs {
        let file = crate::open_log(input)?;
        let summary = fb_join::convert_into(&mut joiner, file, &mut out)
            .map_err(|e| format!("{}: {e}", input.display()))?;
        messages += summary.messages;
        if let Some(err) = summary.framing_error {
            damaged = true;
            eprintln!("fb: {}: {err}", input.display());
        }
    }
    out.flush()
        .map_err(|e| format!("writing the output: {e}"))?;
    let diags = joiner.diagnostics();
    let metrics = joiner.metrics();
    if !args.quiet {
        eprintln!(
            "fb: {} messages, {} events joined ({} not learnable)",
            messages, metrics.joined, metrics.skipped_learn
        );
        crate::report_diagnostics(diags);
    }
    Ok(if damaged {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
