//! What the command line says on standard error besides a command's
//! output: progress, notes, warnings and errors of a run, and the fold of
//! diagnostics. The libraries say nothing themselves: they tell an
//! [`Observer`] or return reports, and this module prints them.

use std::path::PathBuf;

use fb_join::{JoinedEvent, Pipeline};
use fb_run::drive::{Drive, Maps, OnDamage};
use fb_run::input::Input;
use fb_run::job::Job;
use fb_run::options::Filter;
use fb_run::output::Output;
use fb_run::report::{Note, Observer, RunReport};
use fb_run::Error;

use crate::progress::Progress;

/// The command line's observer: a progress bar on a terminal (not with
/// `-q`), warnings unless `-q`, errors always.
pub struct Voice {
    quiet: bool,
    progress: Option<Progress>,
    /// Progress comes seldom (per piece, per few MiB): every report looks
    /// at the clock.
    coarse: bool,
}

impl Voice {
    /// A voice that is quiet (`-q`: errors only) or not.
    pub fn new(quiet: bool) -> Self {
        Self {
            quiet,
            progress: None,
            coarse: false,
        }
    }

    /// The voice for work that reports progress seldom.
    pub fn coarse(self) -> Self {
        Self {
            coarse: true,
            ..self
        }
    }
}

impl Observer for Voice {
    fn note(&mut self, note: Note<'_>) {
        match note {
            Note::Damaged(d) => eprintln!("fb: {d}"),
            Note::Warning { input, what } if !self.quiet => {
                eprintln!("fb: warning: {input}: {what}")
            }
            Note::Info { input, what } if !self.quiet => eprintln!("fb: {input}: {what}"),
            Note::Salvaged { input, report } if !self.quiet => eprintln!("fb: {input}: {report}"),
            Note::Recovered {
                input,
                events,
                skipped,
                ranges,
            } if !self.quiet => eprintln!(
                "fb: {input}: recovered {events} events; {skipped} bytes in {ranges} ranges skipped"
            ),
            Note::IndexStale { index, why } if !self.quiet => {
                eprintln!("fb: {} is stale ({why}): rebuilding it", index.display())
            }
            Note::IndexUnusable { why } if !self.quiet => {
                eprintln!("fb: {why}; reading the whole log")
            }
            _ => {}
        }
    }

    fn wants_total(&self) -> bool {
        // Only a bar drawn on a terminal shows it.
        crate::progress::Progress::draws(self.quiet)
    }

    fn start(&mut self, total: Option<u64>) {
        self.progress = Some(match self.coarse {
            true => Progress::coarse(total, self.quiet),
            false => Progress::new(total, self.quiet),
        });
    }

    fn progress(&mut self, bytes: u64, events: u64) {
        if let Some(p) = &mut self.progress {
            p.add(bytes, events);
        }
    }

    fn finish(&mut self) {
        if let Some(mut p) = self.progress.take() {
            p.finish();
        }
    }
}

/// The command-line paths as inputs (see `fb_run::input::resolve_all`),
/// saying (unless `quiet`) which files of the folders were left out.
pub fn resolve(paths: &[PathBuf], quiet: bool) -> Result<Vec<Input>, Error> {
    let resolved = fb_run::input::resolve_all(paths)?;
    if let (Some(note), false) = (resolved.note(), quiet) {
        eprintln!("fb: note: {note}");
    }
    Ok(resolved.inputs)
}

/// The [`Job`] of a command that reads `inputs` as one log, as the
/// command line runs it: joined as `join` says, `filter`'s events kept,
/// files read (or mapped, as `read` says) and only the blocks of the
/// filter's time window where an index has them, every damaged input
/// reported and read past (the run then exits 1), never cancelled
/// (Ctrl-C ends the process). `target` names the output in errors.
pub fn job<'a>(
    inputs: &'a [Input],
    join: &crate::joinargs::JoinArgs,
    read: &crate::joinargs::ReadArgs,
    filter: &'a Filter,
    recover: bool,
    target: &'a str,
) -> Job<'a, Input> {
    Job {
        inputs,
        join: join.options(),
        filter,
        drive: drive(recover, target, filter.window(), read.maps()),
    }
}

/// How the command line feeds: every damaged input reported and read
/// past, never cancelled.
fn drive(recover: bool, target: &str, window: Option<(i64, i64)>, maps: Maps) -> Drive<'_> {
    Drive {
        recover,
        window,
        maps,
        on_damage: OnDamage::Continue,
        cancel: &Drive::never,
        target,
    }
}

/// Feeds every input to `pipeline` as the command line does: files
/// read (or mapped, as `maps` says), every damaged input reported and read past (the
/// run then exits 1), progress and notes on standard error. `target`
/// names the output in errors.
pub fn feed_all<S, K>(
    inputs: &[Input],
    pipeline: &mut Pipeline<S, K>,
    recover: bool,
    quiet: bool,
    target: &str,
    window: Option<(i64, i64)>,
    maps: Maps,
) -> Result<RunReport, Error>
where
    S: fb_join::Sink + Send,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    let drive = drive(recover, target, window, maps);
    let mut report = RunReport::default();
    let mut voice = Voice::new(quiet);
    fb_run::drive::feed_all(inputs, pipeline, &drive, &mut report, &mut voice)
        .map_err(fb_run::drive::Stop::into_error)?;
    Ok(report)
}

/// Exit 0, or 1 when an input was damaged or not a log.
pub fn exit_code(report: &RunReport) -> std::process::ExitCode {
    match report.failed() {
        false => std::process::ExitCode::SUCCESS,
        true => std::process::ExitCode::from(1),
    }
}

/// Finishes `out`: put in place, or when the run `failed`, kept aside as
/// [`Output::finish_partial`] says (if it holds any `records`: lines,
/// rows) and said on standard error (even with `-q`: it is part of the
/// error). Gives back where the records are now (the target, its
/// `.partial`, or nowhere), for a summary that names it.
pub fn conclude(out: Output, failed: bool, records: u64) -> Result<Option<String>, Error> {
    let target = out.target().to_string();
    if !failed {
        out.finish()?;
        return Ok(Some(target));
    }
    if records == 0 {
        // Headers alone (a Parquet file's): nothing worth keeping.
        drop(out);
        return Ok(None);
    }
    match out.finish_partial()? {
        Some(partial) => {
            let partial = partial.display().to_string();
            eprintln!(
                "fb: the run ended in error: {target} was left as it was; what was written \
                 before the error is in {partial}"
            );
            Ok(Some(partial))
        }
        // Standard output and devices are written in place.
        None => Ok(Some(target)),
    }
}

/// Prints a count per diagnostic kind and the first few examples of each
/// (all of them with `verbose`), each naming its file when there are
/// several; identical lines in a row are said once, with how many.
pub fn report_diagnostics(diags: &fb_join::Diagnostics, verbose: bool, report: &RunReport) {
    let examples = if verbose { usize::MAX } else { 3 };
    let several = report.starts.len() > 1;
    for (kind, count) in diags.counts() {
        if *kind == fb_join::DiagnosticKind::Framing {
            continue; // already said when it happened
        }
        eprintln!("fb: warning: {count} x {}", kind.name());
        let kept: Vec<(usize, &fb_join::Diagnostic)> = diags
            .kept()
            .iter()
            .enumerate()
            .filter(|(_, d)| d.kind == *kind)
            .collect();
        // What the library says in general words, the flag that does it.
        let multistep = kept.iter().any(|(_, d)| d.detail.contains("multistep on"));
        match kind {
            fb_join::DiagnosticKind::NotReady => {
                eprintln!("fb:   (--problem-type sets the problem type of every message)")
            }
            fb_join::DiagnosticKind::EpisodeOutsideMultistep => {
                eprintln!("fb:   (--multistep joins multistep episodes)")
            }
            fb_join::DiagnosticKind::ProblemTypeMismatch if multistep => {
                eprintln!("fb:   (--multistep joins multistep episodes)")
            }
            _ => {}
        }
        let lines: Vec<String> = kept
            .iter()
            .take(examples)
            .map(|(i, d)| match report.file_of(*i) {
                Some(file) if several => format!("{file}: {d}"),
                _ => d.to_string(),
            })
            .collect();
        for (line, times) in fold(&lines) {
            if times > 1 {
                eprintln!("fb:   {line} ({times} times)");
            } else {
                eprintln!("fb:   {line}");
            }
        }
        let shown = kept.len().min(examples) as u64;
        if *count > shown {
            eprintln!("fb:   ... and {} more", count - shown);
        }
    }
}

/// Runs of equal lines, each with its length.
pub fn fold(lines: &[String]) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for line in lines {
        match out.last_mut() {
            Some((last, n)) if *last == line.as_str() => *n += 1,
            _ => out.push((line, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn equal_lines_in_a_row_fold() {
        let lines: Vec<String> = ["a", "a", "b", "a", "c", "c", "c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(fold(&lines), [("a", 2), ("b", 1), ("a", 1), ("c", 3)]);
        assert!(fold(&[]).is_empty());
    }
}
