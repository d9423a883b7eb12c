//! `fb index`: a sidecar index beside each log (`LOG.fbidx`); how it is
//! written, found and trusted is `fb_run::sidecar`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use fb_run::input::Input;
use fb_run::Error;

use crate::Global;

/// Arguments of `fb index`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The logs to index (files or directories of logs); each gets
    /// `LOG.fbidx` beside it.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// Write the index here instead (one log only).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// Threads indexing parts of a log (1 to 256; default: the available
    /// cores). The index is the same for any number.
    #[arg(long, value_name = "N", value_parser = crate::convert::parse_threads)]
    pub threads: Option<usize>,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,

    /// Replace an -o OUT that exists and is not an index (an index is
    /// always replaced: it is rebuilt from its log).
    #[arg(long)]
    pub force: bool,
}

/// Writes the index of every input.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let inputs = crate::say::resolve(&args.inputs, global.quiet)?;
    if args.output.is_some() && inputs.len() != 1 {
        return Err(Error::Msg(
            "-o names the index of one log: give one log, or leave -o out".into(),
        ));
    }
    let mut not_logs = 0u64;
    for input in &inputs {
        let Input::File(log) = input else {
            return Err(Error::Msg(
                "an index lies beside its log: give files, not standard input".into(),
            ));
        };
        let started = Instant::now();
        // Read in windows, or mapped with --mmap: a 10 GiB log is never
        // held in memory.
        let data = fb_run::input::OpenLog::open(input, args.read.maps())?;
        let head = data
            .head()
            .map_err(|e| Error::Msg(format!("cannot read {}: {e}", log.display())))?;
        match fb_run::input::Head::of(&head) {
            fb_run::input::Head::NotALog(why) => {
                eprintln!("fb: error: {}: {why}", log.display());
                not_logs += 1;
                continue;
            }
            fb_run::input::Head::Empty => {
                if !global.quiet {
                    eprintln!(
                        "fb: warning: {}: empty file: nothing to index",
                        log.display()
                    );
                }
                continue;
            }
            fb_run::input::Head::Magic | fb_run::input::Head::NoMagic => {}
        }
        let out = args
            .output
            .clone()
            .unwrap_or_else(|| fb_run::sidecar::path_for(log));
        let threads = args
            .threads
            .unwrap_or_else(fb_run::options::default_threads);
        // Pages given back as the parts leave them behind: memory stays
        // flat in the log's size (a 10 GiB log kept 10 GB resident).
        // Told from the build's threads, every few MiB.
        let size = fb_format::index::LogSource::len(&data);
        let progress =
            std::sync::Mutex::new(crate::progress::Progress::coarse(Some(size), global.quiet));
        let release = |from: u64, to: u64| {
            data.release(from, to);
            if let Ok(mut progress) = progress.lock() {
                progress.add(to.saturating_sub(from), 0);
            }
        };
        let index = fb_run::sidecar::write(log, &data, &out, threads, args.force, &release);
        if let Ok(mut progress) = progress.lock() {
            progress.finish();
        }
        let index = index?;
        if !global.quiet {
            let index_size = std::fs::metadata(&out).map_or(0, |m| m.len());
            eprintln!(
                "fb: {} -> {}: {} blocks, {} decisions, {} checkpoints, {} dedup ids; \
                 {index_size} bytes ({:.2}% of the log's {} bytes) in {:.2} s",
                log.display(),
                out.display(),
                index.blocks.len(),
                index.decisions(),
                index.checkpoints.len(),
                index.dedup_ids(),
                100.0 * index_size as f64 / (size.max(1)) as f64,
                size,
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(if not_logs > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
