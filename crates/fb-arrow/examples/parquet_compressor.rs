//! The compressor alone: the time zstd takes to pack the pages of a
//! Parquet export, on one thread, without the rest of the export (issue
//! 39's floor for Parquet export's speed; `cargo xtask bench --only
//! compressor` runs it).
//!
//! Usage: `parquet_compressor FILE.parquet [RUNS]`, where the file was
//! written by `fb export` (Parquet). Every page of every column chunk the
//! export compressed is read back decompressed, which gives exactly the
//! bytes the writer handed to its codec, and is compressed again as
//! parquet-rs' ZSTD codec does it (parquet 59, `compression.rs` and
//! `column/writer/mod.rs`):
//! - one `zstd::bulk::Compressor` per column chunk (the codec belongs to
//!   a column writer, which lives for a row group), reused page after
//!   page, at the export's level, [`fb_arrow::PARQUET_ZSTD_LEVEL`] (a
//!   Parquet file does not record the level);
//! - a data page v2 compresses its values only, not the repetition and
//!   definition levels before them; a dictionary page or a v1 data page
//!   compresses whole;
//! - into a fresh buffer reserved to zstd's bound.
//!
//! Chunks the export stored uncompressed are skipped, as the export never
//! compressed them. Only the compression calls are timed; the best of
//! `RUNS` passes (1 by default) is printed.
//!
//! Output, tab-separated: one `column` line per column path (codec, bytes
//! in, bytes out, pages, best seconds), then a `total` line (bytes in,
//! bytes out, pages, best seconds of the whole pass).

use std::collections::BTreeMap;
use std::error::Error;
use std::time::{Duration, Instant};

use parquet::basic::Compression;
use parquet::column::page::Page;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// What one column path took over the whole file, in one pass.
#[derive(Default, Clone)]
struct Tally {
    codec: String,
    bytes_in: u64,
    bytes_out: u64,
    pages: u64,
    time: Duration,
}

/// The bytes the writer compressed for `page`.
fn compressed_part(page: &Page) -> Result<&[u8], Box<dyn Error>> {
    Ok(match page {
        Page::DataPageV2 {
            buf,
            rep_levels_byte_len,
            def_levels_byte_len,
            ..
        } => {
            let levels = *rep_levels_byte_len as usize + *def_levels_byte_len as usize;
            buf.get(levels..)
                .ok_or("a v2 page shorter than its levels")?
        }
        Page::DataPage { buf, .. } | Page::DictionaryPage { buf, .. } => buf,
    })
}

/// One pass over the file: every compressed chunk's pages packed again.
fn pass(path: &str) -> Result<(BTreeMap<String, Tally>, Duration), Box<dyn Error>> {
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let reader = SerializedFileReader::new(file)?;
    let mut columns: BTreeMap<String, Tally> = BTreeMap::new();
    let mut total = Duration::ZERO;
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g)?;
        for c in 0..group.num_columns() {
            let meta = group.metadata().column(c);
            match meta.compression() {
                Compression::ZSTD(_) => {}
                Compression::UNCOMPRESSED => continue,
                other => return Err(format!("{path}: {other:?}, not zstd").into()),
            }
            let level = fb_arrow::PARQUET_ZSTD_LEVEL;
            let tally = columns.entry(meta.column_path().string()).or_default();
            tally.codec = format!("zstd({level})");
            let mut compressor = zstd::bulk::Compressor::new(level)?;
            for page in group.get_column_page_reader(c)? {
                let page = page?;
                let bytes = compressed_part(&page)?;
                let start = Instant::now();
                let mut out: Vec<u8> =
                    Vec::with_capacity(zstd::zstd_safe::compress_bound(bytes.len()));
                let written = compressor.compress_to_buffer(bytes, &mut out)?;
                let took = start.elapsed();
                tally.time += took;
                total += took;
                tally.bytes_in += bytes.len() as u64;
                tally.bytes_out += written as u64;
                tally.pages += 1;
            }
        }
    }
    Ok((columns, total))
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        return Err("usage: parquet_compressor FILE.parquet [RUNS]".into());
    };
    let runs: usize = match args.get(1) {
        Some(n) => n.parse().map_err(|e| format!("RUNS {n}: {e}"))?,
        None => 1,
    };
    let mut best: Option<(BTreeMap<String, Tally>, Duration)> = None;
    for _ in 0..runs.max(1) {
        let (columns, total) = pass(path)?;
        best = Some(match best {
            None => (columns, total),
            Some((mut kept, kept_total)) => {
                // Each column's best pass, and the best whole pass.
                for (name, t) in columns {
                    if let Some(k) = kept.get_mut(&name) {
                        k.time = k.time.min(t.time);
                    }
                }
                (kept, kept_total.min(total))
            }
        });
    }
    let (columns, total) = best.ok_or("no pass")?;
    let (mut bytes_in, mut bytes_out, mut pages) = (0, 0, 0);
    for (name, t) in &columns {
        println!(
            "column\t{name}\t{}\t{}\t{}\t{}\t{:.6}",
            t.codec,
            t.bytes_in,
            t.bytes_out,
            t.pages,
            t.time.as_secs_f64()
        );
        bytes_in += t.bytes_in;
        bytes_out += t.bytes_out;
        pages += t.pages;
    }
    println!(
        "total\t{bytes_in}\t{bytes_out}\t{pages}\t{:.6}",
        total.as_secs_f64()
    );
    Ok(())
}
