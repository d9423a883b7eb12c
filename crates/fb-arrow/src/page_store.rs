//! Where a Parquet row group's finished pages wait until the row group is
//! written: each page copied into a buffer of its own size.
//!
//! parquet-rs hands a finished page over in the buffer it compressed it
//! into, reserved for zstd's bound on the page's uncompressed size (about
//! 1 MiB for a `context` page that packs to 70 KB), and its header in a
//! buffer of 1 KiB. Kept as they are until the row group ends, those
//! buffers hold room the next pages could have reused, so the export
//! keeps touching fresh memory: its peak grows by a third
//! (bench/NOTES.md). Copied out at once, the buffers go back to the
//! allocator while the copy, a tenth of the values' bytes, waits.

use std::sync::Arc;

use bytes::Bytes;
use parquet::column::page_store::{
    InMemoryPageStoreFactory, PageKey, PageStore, PageStoreArgs, PageStoreFactory,
};
use parquet::errors::{ParquetError, Result};

/// How a Parquet row group's finished pages are kept until the row group
/// is written. The file is the same bytes either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageStorage {
    /// Each page copied into a buffer of its own size (the fast path).
    #[default]
    Packed,
    /// The buffers parquet-rs hands over, kept as they are: arrow-rs'
    /// own store, the plain path (`fb export --no-caches`).
    AsHanded,
}

impl PageStorage {
    /// The factory arrow-rs' writer makes each column chunk's store with.
    pub(crate) fn factory(self) -> Arc<dyn PageStoreFactory> {
        match self {
            Self::Packed => Arc::new(PackedPagesFactory),
            Self::AsHanded => Arc::new(InMemoryPageStoreFactory),
        }
    }
}

/// Makes a [`PackedPages`] store for each column chunk.
#[derive(Debug)]
struct PackedPagesFactory;

impl PageStoreFactory for PackedPagesFactory {
    fn create(&self, _args: &PageStoreArgs<'_>) -> Result<Box<dyn PageStore>> {
        Ok(Box::new(PackedPages::default()))
    }
}

/// One column chunk's page blobs (headers and bodies) in buffers of their
/// own size, each taken back once, in any order.
#[derive(Debug, Default)]
struct PackedPages {
    blobs: Vec<Bytes>,
    /// Bytes held, for the writer's memory figure.
    resident: usize,
}

impl PageStore for PackedPages {
    fn put(&mut self, value: Bytes) -> Result<PageKey> {
        let key = PageKey::new(self.blobs.len() as u64);
        self.resident += value.len();
        // The copy is the point: `value`'s oversized buffer is freed when
        // it drops here.
        self.blobs.push(Bytes::copy_from_slice(&value));
        Ok(key)
    }

    fn take(&mut self, key: PageKey) -> Result<Bytes> {
        let blob = usize::try_from(key.get())
            .ok()
            .and_then(|index| self.blobs.get_mut(index))
            .map(std::mem::take)
            .ok_or_else(|| ParquetError::General(format!("no page stored under {key:?}")))?;
        self.resident -= blob.len();
        Ok(blob)
    }

    fn memory_size(&self) -> usize {
        self.resident
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_come_back_as_put_in_any_order_once() {
        let mut store = PackedPages::default();
        let mut oversized = Vec::with_capacity(1 << 20);
        oversized.extend_from_slice(b"page body");
        let header = store.put(Bytes::from_static(b"header")).unwrap();
        let body = store.put(Bytes::from(oversized)).unwrap();
        assert_eq!(store.memory_size(), 15);
        assert_eq!(&store.take(body).unwrap()[..], b"page body");
        assert_eq!(store.memory_size(), 6);
        assert_eq!(&store.take(header).unwrap()[..], b"header");
        assert_eq!(store.memory_size(), 0);
        // Taken once: the slot is empty after.
        assert!(store.take(body).unwrap().is_empty());
        assert!(store.take(PageKey::new(7)).is_err());
    }
}
