//! What the integration tests share.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use fb_arrow::{ArrowSink, IpcFile};
use fb_join::{Options, Pipeline, Source};

/// The rows of the shipped valid logs, as one batch.
pub fn corpus_batch() -> RecordBatch {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/valid_joined_logs");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "json"))
        .collect();
    names.sort();
    let sink = ArrowSink::new(IpcFile::new(Vec::new()).unwrap(), 1 << 16);
    let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, 1);
    for name in &names {
        let log = std::fs::read(name).unwrap();
        let _ = pipeline.feed(
            Source::Slice(&log),
            fb_format::Position::START,
            &|| false,
            &mut |_| {},
        );
    }
    let (_, sink) = pipeline.finish();
    let bytes = sink.finish().unwrap();
    let batches: Vec<RecordBatch> =
        arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    arrow_select::concat::concat_batches(&fb_arrow::schema(), &batches).unwrap()
}
