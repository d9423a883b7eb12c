//! Synthetic logs written to outputs (`fb gen`): the generator is
//! `fb_writer::synth`; here its log goes to an output, and is taken apart
//! into the raw streams a client would have written, for `fb join`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use fb_writer::synth::{self, GenConfig, GenSummary, Limit};

use crate::error::Error;
use crate::input::Input;
use crate::output::{Existing, How, Output};
use crate::report::Observer;

/// Buffer between the generator and the output: large writes keep a
/// multi-GiB run I/O-bound.
const OUTPUT_BUFFER: usize = 4 << 20;

/// A writer that tells an [`Observer`] the bytes written through it.
struct Counted<'a, W> {
    inner: W,
    observer: &'a mut dyn Observer,
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.observer.progress(n as u64, 0);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the log `config` describes to `out` and finishes it, telling
/// `observer` the bytes written.
pub fn generate(
    config: &GenConfig,
    mut out: Output,
    observer: &mut dyn Observer,
) -> Result<GenSummary, Error> {
    let total = match config.limit {
        Limit::Bytes(n) => Some(n),
        Limit::Events(_) => None,
    };
    observer.start(total);
    let result = {
        let counted = Counted {
            inner: &mut out,
            observer: &mut *observer,
        };
        let mut buffered = BufWriter::with_capacity(OUTPUT_BUFFER, counted);
        let summary = synth::generate(config, &mut buffered);
        (summary, buffered.flush())
    };
    observer.finish();
    let summary = match result {
        (Ok(summary), Ok(())) => summary,
        (Err(fb_writer::Error::Io { source, .. }), _) | (Ok(_), Err(source)) => {
            return Err(out.error(source))
        }
        (Err(other), _) => return Err(Error::Msg(other.to_string())),
    };
    out.finish()?;
    Ok(summary)
}

/// The raw streams of a log: their paths beside it
/// (`LOG-STEM.interactions.fb`, `.observations.fb`, `.episodes.fb`) and
/// their outputs, opened (and refused when they exist and `existing`
/// does not replace them) before anything is written.
pub struct RawStreams {
    paths: [PathBuf; 3],
    outs: Vec<Output>,
}

impl RawStreams {
    /// Opens the raw streams' outputs beside `log`.
    pub fn beside(log: &Path, existing: Existing) -> Result<Self, Error> {
        let stem = log.with_extension("");
        let paths = ["interactions", "observations", "episodes"]
            .map(|side| PathBuf::from(format!("{}.{side}.fb", stem.display())));
        let inputs = [Input::File(log.to_path_buf())];
        let mut outs = Vec::new();
        for path in &paths {
            outs.push(Output::create(Some(path), &inputs, How::binary(existing))?);
        }
        Ok(Self { paths, outs })
    }

    /// Takes the log at `log` apart into the raw streams (each in client
    /// time order, as a client writes them) and finishes them; the episode
    /// stream only when it holds something; the log read as `maps` says.
    /// What each stream got.
    pub fn write(
        self,
        log: &Path,
        maps: crate::input::Maps,
    ) -> Result<fb_writer::raw::Counts, Error> {
        let Self { paths, mut outs } = self;
        let data = crate::input::whole(&Input::File(log.to_path_buf()), maps)?;
        let counts = {
            let [i, o, e] = &mut outs[..] else {
                return Err("three outputs".into());
            };
            let writers = [i, o, e].map(|out| BufWriter::with_capacity(OUTPUT_BUFFER, out));
            fb_writer::raw::take_apart_by_time(
                &data,
                writers,
                256,
                fb_writer::synth::STREAM_DISORDER_MICROS,
            )
            .map_err(|e| Error::Msg(format!("{}: {e}", log.display())))?
        };
        if counts.behind > 0 {
            // The generator's own bound: a log from this build never gets
            // here.
            return Err(Error::Msg(format!(
                "{}: {} out of client time order in the raw streams: the generator broke its \
                 own bound on how late an outcome comes; please report it",
                log.display(),
                crate::plural(counts.behind, "event")
            )));
        }
        for (out, path) in outs.into_iter().zip(&paths) {
            if counts.episodes == 0 && path.to_string_lossy().ends_with(".episodes.fb") {
                drop(out);
                continue;
            }
            out.finish()?;
        }
        Ok(counts)
    }
}
