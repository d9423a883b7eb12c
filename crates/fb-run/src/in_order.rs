//! Work on a list of items on several threads, results taken in the
//! items' order: `validate` (its inputs) and `split` (its pieces), over
//! the one ordered pool (`fb_join::ordered`).

use fb_join::ordered::Ordered;

use crate::error::Error;

/// Threads, and what they are called: the threads' name, and the work's
/// in an error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Threads<'a> {
    /// How many; one works on the calling thread, in order (the plain
    /// path).
    pub(crate) count: usize,
    /// The threads' name (`fb-validate`).
    pub(crate) name: &'a str,
    /// The work, for an error of the pool ("checking the inputs").
    pub(crate) doing: &'a str,
}

/// Runs `work` on every item, on `threads`, and hands what each gave to
/// `take` in the order of the items; stops at the first error `take`
/// returns, and no item is started after it. A few items at most are
/// worked on ahead of the one `take` waits for, so that memory does not
/// grow with their number.
pub(crate) fn in_order<I: Sync, T: Send>(
    items: &[I],
    threads: Threads<'_>,
    work: impl Fn(&I) -> T + Sync,
    mut take: impl FnMut(T) -> Result<(), Error>,
) -> Result<(), Error> {
    if threads.count <= 1 || items.len() <= 1 {
        return items.iter().try_for_each(|item| take(work(item)));
    }
    let work = &work;
    let done = std::thread::scope(|scope| -> Result<(), Stop> {
        let workers = (0..threads.count.min(items.len())).map(|_| move |item: &I| work(item));
        let mut pool = Ordered::scoped(scope, threads.name, threads.count * 2, workers)?;
        let mut hand = |found: T| take(found).map_err(Stop::Take);
        for item in items {
            pool.submit(item, &mut hand)?;
        }
        pool.finish(hand)
    });
    done.map_err(|stop| match stop {
        Stop::Pool(e) => Error::Msg(format!("{} stopped: {e}", threads.doing)),
        Stop::Take(e) => e,
    })
}

/// Why working in order stopped: a thread of the pool, or what was taken.
enum Stop {
    Pool(fb_join::Error),
    Take(Error),
}

impl From<fb_join::Error> for Stop {
    fn from(e: fb_join::Error) -> Self {
        Stop::Pool(e)
    }
}
