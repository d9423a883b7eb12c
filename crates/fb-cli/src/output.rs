//! Where output goes: stdout or a file, compressed by its extension.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Buffer size of the output: writes this large go straight through.
/// Converters hand it chunks of lines larger than this (a megabyte from
/// one thread, a batch's lines from workers), which so are never copied
/// into the buffer; it only gathers the small writes of other commands.
pub const BUFFER: usize = 256 << 10;

/// Opens the output: stdout for `None` or `-`; `.gz` and `.zst` files are
/// compressed.
pub fn create(path: Option<&Path>) -> Result<Box<dyn Write>, String> {
    let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
        return Ok(Box::new(BufWriter::with_capacity(
            BUFFER,
            io::stdout().lock(),
        )));
    };
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let file = BufWriter::with_capacity(BUFFER, file);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    Ok(match ext {
        "gz" => Box::new(flate2::write::GzEncoder::new(
            file,
            flate2::Compression::default(),
        )),
        "zst" => Box::new(
            zstd::stream::write::Encoder::new(file, 3)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .auto_finish(),
        ),
        _ => Box::new(file),
    })
}
