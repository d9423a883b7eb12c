//! Where formatted bytes go: a `Vec` that grows, or a slice written
//! through a cursor.
//!
//! A DSJSON line is a hundred small writes. Through `&mut Vec<u8>` each one
//! stores the new length to memory and the next loads it back, a chain of
//! store-to-load delays the length of the line; a cursor's position stays
//! in a register. The cursor never grows its slice: it counts what did not
//! fit, and the caller makes room and writes again.

/// A sink for formatted bytes.
pub(crate) trait Put {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Appends one byte.
    fn byte(&mut self, byte: u8);

    /// Appends the first `len` bytes of `bytes` (`len <= N`). A sink with
    /// room may copy all `N` and keep `len`: a copy of known size is a few
    /// moves, where one of variable size calls `memcpy`.
    fn put_first<const N: usize>(&mut self, bytes: &[u8; N], len: usize);
}

impl Put for Vec<u8> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        self.push(byte);
    }

    #[inline(always)]
    fn put_first<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        self.extend_from_slice(bytes.get(..len).unwrap_or(bytes));
    }
}

/// Writes into a slice from its start; what does not fit is counted, not
/// written.
pub(crate) struct Cursor<'b> {
    buf: &'b mut [u8],
    pos: usize,
}

impl<'b> Cursor<'b> {
    /// A cursor at the start of `buf`.
    pub(crate) fn new(buf: &'b mut [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes written, or that would have been: more than the slice holds
    /// when it was too small.
    pub(crate) fn len(&self) -> usize {
        self.pos
    }
}

impl Put for Cursor<'_> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        // Positions count bytes asked for, which were in memory: no sum of
        // them can overflow, and a plain add is what the hot path wants.
        let end = self.pos + bytes.len();
        if let Some(room) = self.buf.get_mut(self.pos..end) {
            room.copy_from_slice(bytes);
        }
        self.pos = end;
    }

    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        if let Some(room) = self.buf.get_mut(self.pos) {
            *room = byte;
        }
        self.pos += 1;
    }

    #[inline(always)]
    fn put_first<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        let len = len.min(N);
        match self.buf.get_mut(self.pos..self.pos + N) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.pos += len;
            }
            None => self.put(bytes.get(..len).unwrap_or(bytes)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_counts_what_does_not_fit() {
        let mut buf = [0u8; 8];
        let mut cur = Cursor::new(&mut buf);
        cur.put(b"abc");
        cur.byte(b'd');
        cur.put(b"ef");
        assert_eq!(cur.len(), 6);
        // Three bytes do not fit in the two left: nothing is written.
        cur.put(b"ghi");
        cur.byte(b'j');
        assert_eq!(cur.len(), 10);
        assert_eq!(&buf, b"abcdef\0\0");
    }

    #[test]
    fn put_first_may_write_past_what_it_keeps() {
        let mut buf = [0u8; 8];
        let mut cur = Cursor::new(&mut buf);
        cur.put_first(b"xyzXX", 3);
        cur.byte(b'!');
        assert_eq!(cur.len(), 4);
        assert_eq!(&buf[..5], b"xyz!X");
    }

    #[test]
    fn put_first_near_the_end_keeps_only_its_prefix() {
        let mut buf = [0u8; 5];
        let mut cur = Cursor::new(&mut buf);
        cur.put(b"ab");
        // Eight bytes do not fit after two, the three wanted do.
        cur.put_first(b"cdeXXXXX", 3);
        assert_eq!(cur.len(), 5);
        assert_eq!(&buf, b"abcde");
        let mut v = Vec::new();
        v.put_first(b"xyzXX", 3);
        v.byte(b'!');
        assert_eq!(v, b"xyz!");
    }
}
