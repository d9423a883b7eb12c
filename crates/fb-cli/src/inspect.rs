//! `fb inspect`: a listing of the messages of one log.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use fb_format::{MessageKind, StreamReader};

/// Arguments of `fb inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The log to list.
    pub file: PathBuf,
}

/// Lists every message; exits 1 when the log is damaged.
pub fn run(args: &Args) -> Result<ExitCode, String> {
    let file = File::open(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let mut reader = StreamReader::new(file);
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let write_err = |e: io::Error| format!("writing the listing: {e}");
    writeln!(
        out,
        "{:>7}  {:>12}  {:<10}  {:>10}  details",
        "index", "offset", "type", "size"
    )
    .map_err(write_err)?;
    let mut problems = 0u64;
    loop {
        let msg = match reader.next_message() {
            Ok(Some(msg)) => msg,
            Ok(None) => break,
            Err(err) => {
                problems += 1;
                eprintln!("fb: {}: {err}", args.file.display());
                break;
            }
        };
        let details = match msg.kind {
            MessageKind::FileMagic => format!("version {}", msg.size_field),
            MessageKind::Regular => regular_details(&msg, &mut problems),
            MessageKind::Unknown(_) => {
                if let Some(w) = msg.unknown_warning() {
                    eprintln!("fb: warning: {w}");
                }
                String::from("skipped")
            }
            _ => String::new(),
        };
        let size = match msg.kind {
            MessageKind::FileMagic => String::from("-"),
            _ => msg.payload.len().to_string(),
        };
        let line = format!(
            "{:>7}  {:>12}  {:<10}  {:>10}  {}",
            msg.index,
            msg.offset,
            msg.kind.name(),
            size,
            details
        );
        writeln!(out, "{}", line.trim_end()).map_err(write_err)?;
    }
    out.flush().map_err(write_err)?;
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn regular_details(msg: &fb_format::Message<'_>, problems: &mut u64) -> String {
    let events = match msg.events() {
        Ok(events) => events,
        Err(err) => {
            *problems += 1;
            return format!("damaged: {err}");
        }
    };
    let count = events.total();
    let mut ids: Vec<String> = Vec::new();
    for event in events {
        match event {
            Ok(view) => {
                if ids.last().map(String::as_str) != Some(view.id) {
                    ids.push(view.id.to_string());
                }
            }
            Err(err) => {
                *problems += 1;
                ids.push(format!("<{err}>"));
            }
        }
    }
    format!("{count} events: {}", ids.join(", "))
}
