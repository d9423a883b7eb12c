//! The walk: reads offsets, tables, vtables and fields of a flatbuffer,
//! checking each where it is read as the flatbuffers verifier checks it
//! (ranges, alignment, signed vtable offsets, UTF-8 and terminators), and
//! optionally counting tables and apparent size as it does.
//!
//! The walk itself proves nothing about a buffer: only the table checks of
//! this module's parent, which visit every field of a table, make a
//! [`QuickVerify`](super::QuickVerify) answer. It is public so that the
//! readers that skim a message without verifying it (fb-format's `skim`)
//! read fields through the same checked steps.

use super::fields::{Field, Kind};

// Limits stricter than `verifier_options()`, so that a "yes" here never
// meets a limit there: half the apparent size, a tenth of the tables.
pub(super) const APPARENT_LIMIT: usize = 1 << 30;
const TABLE_LIMIT: usize = 1_000_000;

/// `(size, alignment)` of one byte.
pub const U8: (usize, usize) = (1, 1);
/// `(size, alignment)` of a 4-byte scalar or offset.
pub const U32: (usize, usize) = (4, 4);
/// `(size, alignment)` of an 8-byte scalar.
pub const U64: (usize, usize) = (8, 8);
/// `TimeStamp`: 12 bytes, alignment 1 as far as the verifier checks.
pub const TIMESTAMP: (usize, usize) = (12, 1);

/// True when `pos` is a multiple of `align`, a power of two: a mask, where
/// `%` by a value the compiler cannot see would be a division.
#[inline(always)]
fn aligned(pos: usize, align: usize) -> bool {
    pos & align.wrapping_sub(1) == 0
}

/// A table whose vtable was read whole.
#[derive(Clone, Copy)]
pub struct Table<'b> {
    pos: usize,
    /// The vtable's bytes, its length field included.
    vtable: &'b [u8],
}

impl Table<'_> {
    /// Where the table starts in the buffer.
    pub fn pos(&self) -> usize {
        self.pos
    }
}

/// A walk over a buffer, checking what flatbuffers checks. With `COUNT`,
/// it also counts tables and apparent size as flatbuffers does; without,
/// it is for tables of a fixed shape in buffers of at most [`FIXED_LIMIT`]
/// bytes, which cannot approach either limit (see there).
pub struct Check<'b, const COUNT: bool = true> {
    buf: &'b [u8],
    /// Bytes the flatbuffers verifier would have counted so far. Compared
    /// with the limit before each string scan (the only work that could
    /// grow faster than the buffer) and at the end.
    apparent: usize,
    tables: usize,
}

/// The largest buffer the fixed-shape checks (`event_parts`, `cb_parts`,
/// `outcome_parts`) take; larger ones go to the flatbuffers verifier.
///
/// Those checks visit at most three tables and a handful of fields, so
/// what flatbuffers counts is at most three vtables (3 x 64 KiB), a few
/// hundred bytes of scalars and offsets, and four vectors or strings of at
/// most the buffer's length each: under 2^28 bytes for a buffer of 2^26,
/// far below the apparent-size limit, and three tables are far below the
/// table limit. Not counting spares a chain of additions through every
/// field of every event.
pub(super) const FIXED_LIMIT: usize = 1 << 26;

impl<'b, const COUNT: bool> Check<'b, COUNT> {
    /// Adds `n` bytes to the apparent size, when counting.
    #[inline(always)]
    fn count(&mut self, n: usize) {
        if COUNT {
            self.apparent = self.apparent.saturating_add(n);
        }
    }

    /// A walk over `buf`, from nothing counted.
    pub fn new(buf: &'b [u8]) -> Self {
        Self {
            buf,
            apparent: 0,
            tables: 0,
        }
    }

    /// The `N` bytes at `pos`, which must be aligned to `align` (relative
    /// to the buffer); counted towards the apparent size.
    #[inline(always)]
    pub fn bytes<const N: usize, const ALIGN: usize>(&mut self, pos: usize) -> Option<[u8; N]> {
        self.bytes_ref::<N, ALIGN>(pos).copied()
    }

    /// [`Check::bytes`], borrowed: a struct field kept by its readers,
    /// which then need not copy it byte by byte.
    #[inline(always)]
    fn bytes_ref<const N: usize, const ALIGN: usize>(&mut self, pos: usize) -> Option<&'b [u8; N]> {
        // A constant: alignments of one cost nothing.
        if !aligned(pos, ALIGN) {
            return None;
        }
        let bytes = self.buf.get(pos..pos.checked_add(N)?)?.try_into().ok()?;
        self.count(N);
        Some(bytes)
    }

    /// A scalar of `size` bytes aligned to `align`.
    #[inline(always)]
    fn scalar(&mut self, pos: usize, (size, align): (usize, usize)) -> Option<()> {
        if !aligned(pos, align) || pos.checked_add(size)? > self.buf.len() {
            return None;
        }
        self.count(size);
        Some(())
    }

    /// The little-endian `u32` at `pos` (aligned).
    #[inline(always)]
    pub fn u32_at(&mut self, pos: usize) -> Option<usize> {
        Some(u32::from_le_bytes(self.bytes::<4, 4>(pos)?) as usize)
    }

    /// Follows the forward offset stored at `pos`.
    #[inline(always)]
    pub fn follow(&mut self, pos: usize) -> Option<usize> {
        Some(self.u32_at(pos)?.saturating_add(pos))
    }

    /// The table at `pos`, its vtable read whole.
    #[inline(always)]
    pub fn table(&mut self, pos: usize) -> Option<Table<'b>> {
        let soffset = i32::from_le_bytes(self.bytes::<4, 4>(pos)?);
        let distance = soffset.unsigned_abs() as usize;
        let vtable = if soffset > 0 {
            pos.checked_sub(distance)?
        } else {
            pos.checked_add(distance)?
        };
        let vtable_len = usize::from(u16::from_le_bytes(self.bytes::<2, 2>(vtable)?));
        // `vtable` is even, so this asks for an even length.
        if !vtable_len.is_multiple_of(2) {
            return None;
        }
        let bytes = self.buf.get(vtable..vtable.checked_add(vtable_len)?)?;
        self.count(vtable_len);
        if COUNT {
            self.tables += 1;
        }
        Some(Table { pos, vtable: bytes })
    }

    /// Where field `f` of `t` is, `None` when absent. The vtable was
    /// checked whole, so this cannot fail.
    #[inline(always)]
    pub fn field(&mut self, t: Table<'_>, f: Field) -> Option<usize> {
        self.slot(t, f, usize::from(f.voffset))
    }

    /// Where the vtable slot `voffset` (`f`'s own, or a union's tag
    /// before it) of `t` points, `None` when absent.
    #[inline(always)]
    fn slot(&mut self, t: Table<'_>, f: Field, voffset: usize) -> Option<usize> {
        #[cfg(test)]
        super::tests::record(f);
        let _ = f;
        let entry = t.vtable.get(voffset..)?.first_chunk::<2>()?;
        self.count(2);
        let at = usize::from(u16::from_le_bytes(*entry));
        // `pos` is inside the buffer and `at` below 2^16: no overflow.
        (at > 0).then(|| t.pos + at)
    }

    /// Where a union field's tag and member are: `(tag, member)`.
    #[inline(always)]
    pub(super) fn union(&mut self, t: Table<'_>, f: Field) -> (Option<usize>, Option<usize>) {
        debug_assert!(matches!(f.ty.kind, Kind::Union), "{f:?}");
        let member = self.field(t, f);
        // The tag's slot is the one before the member's (see `fields`).
        let tag = self.slot(t, f, usize::from(f.voffset) - 2);
        (tag, member)
    }

    /// An optional scalar or struct field.
    #[inline(always)]
    pub fn scalar_field(&mut self, t: Table<'_>, f: Field) -> Option<()> {
        let Kind::Scalar(shape) = f.ty.kind else {
            debug_assert!(false, "{f:?} is not a scalar");
            return None;
        };
        match self.field(t, f) {
            Some(pos) => self.scalar(pos, shape),
            None => Some(()),
        }
    }

    /// A vector of `shape` elements at `pos`; returns where its elements
    /// start and their count.
    #[inline(always)]
    pub fn vector(&mut self, pos: usize, (size, align): (usize, usize)) -> Option<(usize, usize)> {
        let len = self.u32_at(pos)?;
        let start = pos.saturating_add(4);
        self.scalar(start, (len.saturating_mul(size), align))?;
        Some((start, len))
    }

    /// The element shape of vector field `f`.
    #[inline(always)]
    fn elements(f: Field) -> Option<(usize, usize)> {
        match f.ty.kind {
            Kind::Vector(shape) => Some(shape),
            _ => {
                debug_assert!(false, "{f:?} is not a vector of scalars");
                None
            }
        }
    }

    /// An optional vector-of-scalars field.
    #[inline(always)]
    pub fn vector_field(&mut self, t: Table<'_>, f: Field) -> Option<()> {
        let shape = Self::elements(f)?;
        if let Some(pos) = self.field(t, f) {
            let at = self.follow(pos)?;
            self.vector(at, shape)?;
        }
        Some(())
    }

    /// The string at `pos`, checked as the verifier checks one.
    pub fn string(&mut self, pos: usize) -> Option<()> {
        self.text(pos).map(|_| ())
    }

    /// The string at `pos`: its length in bounds, a zero after it, UTF-8.
    pub fn text(&mut self, pos: usize) -> Option<&'b str> {
        let (start, len) = self.vector(pos, U8)?;
        // Many vector elements may point at one long string: stop where
        // flatbuffers would, before the scans add up.
        if COUNT && self.apparent > APPARENT_LIMIT {
            return None;
        }
        let end = start.checked_add(len)?;
        let bytes = self.buf.get(start..end)?;
        if self.buf.get(end) != Some(&0) {
            return None;
        }
        // Ids and names are ASCII: a word-at-a-time test skips the decoder.
        if bytes.is_ascii() {
            // SAFETY: `from_utf8_unchecked` asks for UTF-8, and ASCII is
            // UTF-8 (`is_ascii` just checked every byte).
            return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
        }
        std::str::from_utf8(bytes).ok()
    }

    /// An optional string field's text.
    #[inline(always)]
    pub fn text_field(&mut self, t: Table<'_>, f: Field) -> Option<Option<&'b str>> {
        debug_assert!(matches!(f.ty.kind, Kind::String), "{f:?}");
        match self.field(t, f) {
            Some(pos) => {
                let at = self.follow(pos)?;
                Some(Some(self.text(at)?))
            }
            None => Some(None),
        }
    }

    /// An optional vector-of-scalars field's bytes.
    #[inline(always)]
    pub fn bytes_field(&mut self, t: Table<'_>, f: Field) -> Option<Option<&'b [u8]>> {
        let shape = Self::elements(f)?;
        match self.field(t, f) {
            Some(pos) => {
                let at = self.follow(pos)?;
                let (start, len) = self.vector(at, shape)?;
                let end = start.checked_add(len.checked_mul(shape.0)?)?;
                Some(Some(self.buf.get(start..end)?))
            }
            None => Some(None),
        }
    }

    /// An optional string field's bytes, for readers that verify
    /// nothing: its length is checked, not its terminator nor its UTF-8.
    #[inline(always)]
    pub fn string_bytes_field(&mut self, t: Table<'_>, f: Field) -> Option<Option<&'b [u8]>> {
        debug_assert!(matches!(f.ty.kind, Kind::String), "{f:?}");
        match self.field(t, f) {
            Some(pos) => {
                let at = self.follow(pos)?;
                let (start, len) = self.vector(at, U8)?;
                Some(Some(self.buf.get(start..start.checked_add(len)?)?))
            }
            None => Some(None),
        }
    }

    /// An optional scalar field's `N` bytes, `None` when absent.
    #[inline(always)]
    pub fn value_field<const N: usize, const ALIGN: usize>(
        &mut self,
        t: Table<'_>,
        f: Field,
    ) -> Option<Option<[u8; N]>> {
        debug_assert!(f.ty.kind == Kind::Scalar((N, ALIGN)), "{f:?}");
        match self.field(t, f) {
            Some(pos) => Some(Some(self.bytes::<N, ALIGN>(pos)?)),
            None => Some(None),
        }
    }

    /// [`Check::value_field`], borrowed.
    #[inline(always)]
    pub fn value_ref<const N: usize, const ALIGN: usize>(
        &mut self,
        t: Table<'_>,
        f: Field,
    ) -> Option<Option<&'b [u8; N]>> {
        debug_assert!(f.ty.kind == Kind::Scalar((N, ALIGN)), "{f:?}");
        match self.field(t, f) {
            Some(pos) => Some(Some(self.bytes_ref::<N, ALIGN>(pos)?)),
            None => Some(None),
        }
    }

    /// The limits [`Check::root`] holds a whole buffer to.
    pub fn within_limits(&self) -> bool {
        !COUNT || (self.apparent <= APPARENT_LIMIT && self.tables <= TABLE_LIMIT)
    }

    /// An optional string field.
    #[inline(always)]
    pub fn string_field(&mut self, t: Table<'_>, f: Field) -> Option<()> {
        debug_assert!(matches!(f.ty.kind, Kind::String), "{f:?}");
        if let Some(pos) = self.field(t, f) {
            let at = self.follow(pos)?;
            self.string(at)?;
        }
        Some(())
    }

    /// An optional vector-of-tables (or strings) field, each element
    /// checked by `check`.
    pub fn vector_of(
        &mut self,
        t: Table<'_>,
        f: Field,
        check: fn(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        debug_assert!(matches!(f.ty.kind, Kind::Tables | Kind::Strings), "{f:?}");
        if let Some(pos) = self.field(t, f) {
            let at = self.follow(pos)?;
            let (start, len) = self.vector(at, U32)?;
            for i in 0..len {
                let element = self.follow(start.checked_add(i.checked_mul(4)?)?)?;
                check(self, element)?;
            }
        }
        Some(())
    }

    /// Runs `check` on the root table.
    pub fn root(buf: &'b [u8], check: fn(&mut Self, usize) -> Option<()>) -> bool {
        let mut c = Self::new(buf);
        let shape_ok = (|| {
            let at = c.follow(0)?;
            check(&mut c, at)
        })()
        .is_some();
        // Both counts only grow, so a total within the (stricter) limits
        // means flatbuffers never crossed its own on the way.
        shape_ok && c.within_limits()
    }
}
