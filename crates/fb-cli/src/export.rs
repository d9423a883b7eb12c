//! `fb export`: joined logs to Parquet or Arrow IPC, in the schema of
//! `docs/arrow-schema.md`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use fb_arrow::{ArrowSink, BatchWriter, IpcEncoding, IpcFile, IpcStream, ParquetFile};
use fb_join::Pipeline;

use crate::convert::parse_threads;
use crate::joinargs::{FilterArgs, JoinArgs};
use crate::say::{feed_all, report_diagnostics};
use crate::Global;
use fb_run::options::default_threads;
use fb_run::output::{Columnar, Existing, How, Output};
use fb_run::Error;

/// Arguments of `fb export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Logs to export (files, directories of logs, `-` for stdin), read
    /// in order as one stream.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// The file to write; `-` writes an Arrow IPC stream to standard
    /// output, refused on a terminal. Parquet readers seek to a file's
    /// footer, so `--format parquet -o -` is refused.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,

    /// What a file holds. Default: from OUT's name, an Arrow IPC file for
    /// `.arrow`, `.ipc` and `.feather`, an Arrow IPC stream for `.arrows`,
    /// else Parquet.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Write a Hive-style tree of Parquet files under OUT, a directory:
    /// `OUT/date=2026-11-23/part-00000.parquet` (`hour`:
    /// `date=…/hour=13/…`), by each event's timestamp (UTC). Two
    /// partitions are open at once, the current one and the one before;
    /// rows that come back to a partition closed since go to its next
    /// part (`part-00001.parquet`).
    #[arg(long, value_name = "BY", value_enum, default_value_t = PartitionBy::None)]
    pub partition_by: PartitionBy,

    /// Only these columns, in this order (comma-separated, such as
    /// `event_id,timestamp,reward`): the others are not even built, so a
    /// narrow export is faster. The names are in docs/arrow-schema.md.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub columns: Vec<String>,

    /// Rows per record batch. Small batches stay in the processor's
    /// caches and the allocator reuses their memory; Parquet row groups
    /// gather many of them.
    #[arg(long, value_name = "N", default_value_t = 8_192, value_parser = parse_rows)]
    pub batch_rows: usize,

    /// Rows per Parquet row group at most; a row group also ends at 64 MiB
    /// of Arrow data, which bounds the memory of an export.
    #[arg(long, value_name = "N", default_value_t = 1 << 20, value_parser = parse_rows)]
    pub row_group_rows: usize,

    /// Replace the output file if it exists.
    #[arg(long)]
    pub force: bool,

    /// How to join.
    #[command(flatten)]
    pub join: JoinArgs,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,

    /// Which events to keep.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Keep going past damage, as `fb convert --recover` does.
    #[arg(long)]
    pub recover: bool,

    /// Worker threads (1 to 256); the rows are the same, in the same order,
    /// whatever the number. Default: the available cores.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
}

/// How `fb export` cuts its output into a tree of files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PartitionBy {
    /// One file.
    None,
    /// A folder per day (UTC).
    Date,
    /// A folder per day, and one per hour in it (UTC).
    Hour,
}

/// What `fb export` writes to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Parquet: zstd, statistics, dictionaries.
    Parquet,
    /// An Arrow IPC file (with `-o -` or an OUT named `.arrows`, the
    /// stream).
    Arrow,
}

/// What one output (not a partitioned tree) is written as: `--format`
/// when given, else what OUT's name says ([`Columnar::named_by`]);
/// standard output gets the IPC stream, which needs no seeking back, and
/// so does `--format arrow -o x.arrows`.
fn written(args: &Args) -> Columnar {
    let named = Columnar::named_by(&args.output);
    let format = args.format.unwrap_or(match named {
        Some(Columnar::ArrowFile | Columnar::ArrowStream) => Format::Arrow,
        Some(Columnar::Parquet) | None => Format::Parquet,
    });
    match format {
        _ if args.output.as_os_str() == "-" => Columnar::ArrowStream,
        Format::Arrow if named == Some(Columnar::ArrowStream) => Columnar::ArrowStream,
        Format::Arrow => Columnar::ArrowFile,
        Format::Parquet => Columnar::Parquet,
    }
}

/// `--batch-rows` and `--row-group-rows`: a batch or row group of no rows
/// would hold nothing.
fn parse_rows(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err("expected a number of rows, at least 1".into()),
    }
}

/// `-o -`: refused where what would come out is not what was asked for.
fn check_stdout(args: &Args) -> Result<(), Error> {
    if args.format == Some(Format::Parquet) {
        let msg = "--format parquet cannot be written to standard output (`-o -` writes \
                   an Arrow IPC stream): give -o FILE.parquet, or leave out --format for \
                   the stream";
        return Err(msg.into());
    }
    // Binary on a terminal is refused where every output is opened.
    Ok(())
}

/// Exports; exit 0 clean, 1 when an input was damaged or not a log, 2 for
/// usage or I/O errors.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    args.filter.filter()?;
    let columns = columns(args)?;
    let to_stdout = args.output.as_os_str() == "-";
    if to_stdout && args.partition_by == PartitionBy::None {
        check_stdout(args)?;
    }
    let started = Instant::now();
    let inputs = crate::say::resolve(&args.inputs, global.quiet)?;
    if args.partition_by != PartitionBy::None {
        return partitioned(args, global, &inputs, columns, started);
    }
    let how = How::binary(Existing::forced(args.force));
    let mut out = Output::create(Some(&args.output), &inputs, how)?;
    let target = out.target().to_string();
    let failed = |e| output_failed(&target, e);
    let schema = columns.schema();
    let job = Job {
        args,
        global,
        inputs: &inputs,
        columns,
        target: &target,
    };
    let ipc_encoding = match args.join.no_caches {
        true => IpcEncoding::Joined,
        false => IpcEncoding::Pieces,
    };
    let rows = match written(args) {
        Columnar::ArrowStream => {
            let ipc = IpcStream::with_encoding(&mut out, &schema, ipc_encoding).map_err(failed)?;
            export_aside(job, ipc)?
        }
        Columnar::ArrowFile => {
            let ipc = IpcFile::with_encoding(&mut out, &schema, ipc_encoding).map_err(failed)?;
            export_aside(job, ipc)?
        }
        Columnar::Parquet => {
            let rows = args.row_group_rows;
            let bytes = fb_arrow::ROW_GROUP_BYTES;
            let parquet = ParquetFile::on_path(&mut out, rows, bytes, schema, parquet_path(args))
                .and_then(|p| p.encoding_threads(encoding_threads(args)))
                .map_err(failed)?;
            export_aside(job, parquet)?
        }
    };
    let (rows, report) = rows;
    let kept = crate::say::conclude(out, report.failed() && !args.recover, rows)?;
    if !global.quiet {
        let secs = started.elapsed().as_secs_f64();
        // A failed run's rows are in OUT.partial, or nowhere.
        let written = match kept {
            Some(at) => format!("{} written to {at}", fb_run::plural(rows, "row")),
            None => "no rows written".into(),
        };
        eprintln!(
            "fb: {}, {written} in {secs:.2} s ({:.0} MB/s of input)",
            fb_run::plural(inputs.len() as u64, "input"),
            report.bytes as f64 / 1e6 / secs.max(1e-6),
        );
    }
    Ok(crate::say::exit_code(&report))
}

/// `--partition-by`: a tree of Parquet files written in a temporary
/// directory beside OUT and renamed into place when complete.
fn partitioned(
    args: &Args,
    global: &Global,
    inputs: &[fb_run::input::Input],
    columns: fb_arrow::Columns,
    started: Instant,
) -> Result<ExitCode, Error> {
    if args.output.as_os_str() == "-" || args.format == Some(Format::Arrow) {
        return Err(Error::Msg(
            "--partition-by writes a directory of Parquet files: give -o DIR and no --format arrow"
                .into(),
        ));
    }
    let by = match args.partition_by {
        PartitionBy::Hour => fb_arrow::Partitioning::Hour,
        PartitionBy::Date | PartitionBy::None => fb_arrow::Partitioning::Date,
    };
    let target = args.output.display().to_string();
    let dir =
        fb_run::output::DirOutput::create(&args.output, inputs, Existing::forced(args.force))?;
    let writer = fb_arrow::Partitioned::new(dir.path(), by, args.row_group_rows)
        .encoding_threads(encoding_threads(args))
        .parquet_path(parquet_path(args));
    let job = Job {
        args,
        global,
        inputs,
        columns,
        target: &target,
    };
    let (rows, report) = export_aside(job, writer)?;
    if report.failed() && !args.recover {
        if rows == 0 {
            return Ok(crate::say::exit_code(&report));
        }
        let partial = dir.finish_partial()?;
        eprintln!(
            "fb: the run ended in error: {target} was left as it was; what was written before \
             the error is in {}",
            partial.display()
        );
        return Ok(crate::say::exit_code(&report));
    }
    dir.finish()?;
    if !global.quiet {
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "fb: {}, {} written under {target} in {secs:.2} s",
            fb_run::plural(inputs.len() as u64, "input"),
            fb_run::plural(rows, "row"),
        );
    }
    Ok(crate::say::exit_code(&report))
}

/// Threads that encode Parquet columns: as many as join (fb-arrow spawns
/// at most four lanes a file), or one (arrow-rs' own writer, the plain
/// path) under `--no-caches`. The file is the same bytes either way.
fn encoding_threads(args: &Args) -> usize {
    match args.join.no_caches {
        true => 1,
        false => args.threads.unwrap_or_else(default_threads),
    }
}

/// Which code writes Parquet: fb's fast path, or arrow-rs' writer alone
/// (the plain path) under `--no-caches`. The file is the same bytes
/// either way.
fn parquet_path(args: &Args) -> fb_arrow::ParquetPath {
    match args.join.no_caches {
        true => fb_arrow::ParquetPath::Plain,
        false => fb_arrow::ParquetPath::Fast,
    }
}

/// `--columns` as a choice of columns; every one when not given.
fn columns(args: &Args) -> Result<fb_arrow::Columns, Error> {
    if args.columns.is_empty() {
        return Ok(fb_arrow::Columns::all());
    }
    let columns = fb_arrow::Columns::named(&args.columns)
        .map_err(|e| Error::Msg(format!("--{e} (docs/arrow-schema.md)")))?;
    if args.partition_by != PartitionBy::None && columns.schema().index_of("timestamp").is_err() {
        return Err(Error::Msg(
            "--partition-by splits rows by their timestamp: add `timestamp` to --columns".into(),
        ));
    }
    Ok(columns)
}

/// What an export runs on, besides its writer.
struct Job<'a> {
    args: &'a Args,
    global: &'a Global,
    inputs: &'a [fb_run::input::Input],
    columns: fb_arrow::Columns,
    target: &'a str,
}

/// As [`export`], with `writer` on a thread of its own where several
/// threads join ([`fb_arrow::Offload`]): the thread that takes their
/// batches in order then only hands them on. One thread, and
/// `--no-caches` (the plain path), write on the caller's thread; the file
/// is the same bytes.
fn export_aside<B>(job: Job<'_>, writer: B) -> Result<(u64, fb_run::report::RunReport), Error>
where
    B: BatchWriter + Send,
    B::Output: Send,
{
    if join_threads(job.args) < 2 || job.args.join.no_caches {
        return export(job, writer);
    }
    std::thread::scope(|scope| {
        let writer = fb_arrow::Offload::new(scope, writer)
            .map_err(|e| Error::Msg(format!("{}: {e}", job.target)))?;
        export(job, writer)
    })
}

/// An error of the output's writer: a failed write names the output and
/// says what the system said; anything else names the output.
fn output_failed(target: &str, e: fb_arrow::Error) -> Error {
    match e.io_kind() {
        Some(_) => Error::write(target, e.into_output_error()),
        None => Error::Msg(format!("{target}: {e}")),
    }
}

/// Threads that join: one to recover.
fn join_threads(args: &Args) -> usize {
    match args.recover {
        true => 1,
        false => args.threads.unwrap_or_else(default_threads),
    }
}

/// Runs the pipeline into `writer` and closes it.
fn export<B: BatchWriter + Send>(
    job: Job<'_>,
    writer: B,
) -> Result<(u64, fb_run::report::RunReport), Error> {
    let Job {
        args,
        global,
        inputs,
        columns,
        target,
    } = job;
    let mut opts = args.join.options();
    opts.only = args.filter.only.clone();
    let threads = join_threads(args);
    let filter = args.filter.filter()?;
    let sink = ArrowSink::new(writer, args.batch_rows).with_columns(columns);
    let mut pipeline = Pipeline::new(opts, fb_run::drive::keeper(&filter), sink, threads);
    let report = feed_all(
        inputs,
        &mut pipeline,
        args.recover,
        global.quiet,
        target,
        filter.window(),
        args.read.maps(),
    )?;
    let (joiner, sink) = pipeline.finish();
    let rows = sink.rows();
    // The last rows are written here: a closed pipe stays one (quiet).
    sink.finish().map_err(|e| output_failed(target, e))?;
    if !global.quiet {
        report_diagnostics(joiner.diagnostics(), global.verbose > 0, &report);
    }
    Ok((rows, report))
}
