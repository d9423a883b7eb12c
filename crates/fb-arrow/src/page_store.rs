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

use bytes::Bytes;
use parquet::column::page_store::{
    InMemoryPageStore, PageKey, PageStore, PageStoreArgs, PageStoreFactory,
};
use parquet::errors::Result;

/// Makes a [`PackedPages`] store for each column chunk (the fast path's;
/// the plain path keeps arrow-rs' own).
#[derive(Debug)]
pub(crate) struct PackedPagesFactory;

impl PageStoreFactory for PackedPagesFactory {
    fn create(&self, _args: &PageStoreArgs<'_>) -> Result<Box<dyn PageStore>> {
        Ok(Box::new(PackedPages::default()))
    }
}

/// One column chunk's page blobs (headers and bodies) in arrow-rs' own
/// store, each copied first into a buffer of its own size.
#[derive(Debug, Default)]
struct PackedPages(InMemoryPageStore);

impl PageStore for PackedPages {
    fn put(&mut self, value: Bytes) -> Result<PageKey> {
        // The copy is the point: `value`'s oversized buffer is freed when
        // it drops here.
        self.0.put(Bytes::copy_from_slice(&value))
    }

    fn take(&mut self, key: PageKey) -> Result<Bytes> {
        self.0.take(key)
    }

    fn memory_size(&self) -> usize {
        self.0.memory_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_come_back_copied_in_any_order_once() {
        let mut store = PackedPages::default();
        let mut oversized = Vec::with_capacity(1 << 20);
        oversized.extend_from_slice(b"page body");
        let handed = Bytes::from(oversized);
        let header = store.put(Bytes::from_static(b"header")).unwrap();
        let body = store.put(handed.clone()).unwrap();
        assert_eq!(store.memory_size(), 15);
        let kept = store.take(body).unwrap();
        assert_eq!(&kept[..], b"page body");
        // A copy, not the buffer handed over (reserved to 1 MiB).
        assert_ne!(kept.as_ptr(), handed.as_ptr());
        assert_eq!(store.memory_size(), 6);
        assert_eq!(&store.take(header).unwrap()[..], b"header");
        assert_eq!(store.memory_size(), 0);
        // Taken once: the slot is empty after.
        assert!(store.take(body).unwrap().is_empty());
        assert!(store.take(PageKey::new(7)).is_err());
    }
}
