//! Surplus items of a reused vector kept for the next fill, rather than
//! dropped with their buffers and made again.
//!
//! An event's buffers are refilled by the next event; where that one has
//! fewer outcomes, or a decision fewer slots, `truncate` would free each
//! surplus item's strings and vectors, and the next longer fill would
//! allocate them again, every time the count changes.
//!
//! ```text
//!   items: [a b c d]   keep 2   ──►   items: [a b]   pool: [.. d c]
//! ```

/// Items kept in one pool at most: a few events' worth.
pub(crate) const LIMIT: usize = 1024;

/// Moves the items of `items` past the first `keep` into `pool` (up to
/// [`LIMIT`]), each after `strip`, which may take buffers out of it for a
/// pool of their own.
#[inline(always)]
pub(crate) fn park<T>(
    items: &mut Vec<T>,
    keep: usize,
    pool: &mut Vec<T>,
    strip: impl FnMut(&mut T),
) {
    // The test in line: nearly every fill has as many items as the last.
    if items.len() > keep {
        park_surplus(items, keep, pool, strip);
    }
}

#[inline(never)]
fn park_surplus<T>(
    items: &mut Vec<T>,
    keep: usize,
    pool: &mut Vec<T>,
    mut strip: impl FnMut(&mut T),
) {
    while items.len() > keep {
        let Some(mut item) = items.pop() else {
            break;
        };
        strip(&mut item);
        if pool.len() < LIMIT {
            pool.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_surplus_goes_to_the_pool_stripped_and_bounded() {
        let mut items: Vec<Vec<u8>> = vec![vec![1], vec![2], vec![3], vec![4]];
        let mut pool = Vec::new();
        park(&mut items, 2, &mut pool, Vec::clear);
        assert_eq!(items, vec![vec![1], vec![2]]);
        assert_eq!(pool, vec![Vec::<u8>::new(), Vec::new()]);
        park(&mut items, 5, &mut pool, Vec::clear);
        assert_eq!(items.len(), 2, "nothing past a longer keep");
        let mut full: Vec<Vec<u8>> = vec![Vec::new(); LIMIT];
        park(&mut items, 0, &mut full, Vec::clear);
        assert!(items.is_empty());
        assert_eq!(full.len(), LIMIT, "a full pool drops the surplus");
    }
}
