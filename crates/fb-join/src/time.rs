//! Timestamps: ordering keys and the DSJSON text form.

use fb_schema::TimeStamp;

use crate::number::put_u64;
use crate::put::Put;
use crate::{Caches, Compat};

/// Largest valid subsecond: the client library counts 100 ns ticks.
pub const MAX_SUBSECOND: u32 = 9_999_999;

/// Microseconds since 1970 (UTC) of a log's time; a subsecond that is not
/// 100 ns ticks (above [`MAX_SUBSECOND`]) counts as 0, as the DSJSON
/// writes it. The Parquet and Arrow columns and the report's delays.
pub fn micros(t: &TimeStamp) -> i64 {
    micros_of(key(t))
}

/// [`micros`] of a time's [`key`], for a caller that has the key already.
pub fn micros_of((secs, sub): (i64, u32)) -> i64 {
    let sub = if sub > MAX_SUBSECOND { 0 } else { sub };
    secs.saturating_mul(1_000_000)
        .saturating_add(i64::from(sub / 10))
}

/// Seconds since 1970-01-01 (proleptic Gregorian, no leap seconds) and the
/// subsecond field; a total order for comparing times.
pub fn key(t: &TimeStamp) -> (i64, u32) {
    // Clamped fields, so that any bytes give some number rather than a
    // panic.
    let days = fb_schema::calendar::days_from_civil(
        i64::from(t.year()),
        u32::from(t.month()).clamp(1, 12),
        u32::from(t.day()).clamp(1, 31),
    );
    (days * 86_400 + of_day(t), t.subsecond())
}

/// A day of a log's times, to give [`key`] and [`micros`] of other times
/// on the same day without the calendar: most outcomes fall on their
/// decision's day (and most events on the one before's), and the date's
/// conversion was most of what a time cost.
#[derive(Debug, Clone, Copy)]
pub struct Day {
    /// The stored (unclamped) year, month and day; times with other
    /// fields go through [`micros`].
    date: (u16, u8, u8),
    /// [`key`]'s seconds of the day's first second.
    start: i64,
}

impl Day {
    /// The day of `t`, whose [`key`] the caller has already.
    pub fn of_key(t: &TimeStamp, (secs, _): (i64, u32)) -> Self {
        Self {
            date: (t.year(), t.month(), t.day()),
            start: secs - of_day(t),
        }
    }

    /// Whether `t` falls on this day.
    #[inline]
    pub fn holds(&self, t: &TimeStamp) -> bool {
        (t.year(), t.month(), t.day()) == self.date
    }

    /// [`key`] of `t`, the day's start reused when `t` falls on it.
    #[inline]
    pub fn key(&self, t: &TimeStamp) -> (i64, u32) {
        if !self.holds(t) {
            return key(t);
        }
        (self.start + of_day(t), t.subsecond())
    }

    /// [`micros`] of `t`, the day's start reused when `t` falls on it.
    #[inline]
    pub fn micros(&self, t: &TimeStamp) -> i64 {
        micros_of(self.key(t))
    }
}

/// The day of the last time asked for, kept: the events of a log mostly
/// fall on the day of the one before.
#[derive(Debug, Default, Clone, Copy)]
pub struct LastDay(Option<Day>);

impl LastDay {
    /// The day of `t`: the kept one when `t` falls on it, else `t`'s own,
    /// kept from then on.
    #[inline]
    pub fn of(&mut self, t: &TimeStamp) -> Day {
        match self.0 {
            Some(day) if day.holds(t) => day,
            _ => {
                let day = Day::of_key(t, key(t));
                self.0 = Some(day);
                day
            }
        }
    }
}

/// The seconds of `t`'s fields below the day, as [`key`] adds them.
fn of_day(t: &TimeStamp) -> i64 {
    i64::from(t.hour()) * 3600 + i64::from(t.minute()) * 60 + i64::from(t.second())
}

/// Appends `"YYYY-MM-DDTHH:MM:SS.ffffffZ"` (quoted).
///
/// [`Compat::Reference`] always writes `.000000` (the reference drops the
/// subsecond); otherwise the subsecond ticks are written as microseconds,
/// and an invalid subsecond (above [`MAX_SUBSECOND`]) as zero. Returns
/// false when the subsecond was invalid.
pub fn push_timestamp(out: &mut Vec<u8>, t: &TimeStamp, compat: Compat) -> bool {
    put_timestamp(out, t, compat)
}

/// [`push_timestamp`] into any sink.
pub(crate) fn put_timestamp<P: Put>(out: &mut P, t: &TimeStamp, compat: Compat) -> bool {
    MinuteMemo::keeping(Caches::Off).put(out, t, compat)
}

/// [`push_timestamp`] for a year above 9999 or a field above 99 (corrupt
/// bytes): each field in as many digits as it has.
fn put_padded<P: Put>(out: &mut P, t: &TimeStamp, compat: Compat) -> bool {
    let (micros, valid) = written_micros(t, compat);
    out.byte(b'"');
    pad(out, u64::from(t.year()), 4);
    out.byte(b'-');
    pad(out, u64::from(t.month()), 2);
    out.byte(b'-');
    pad(out, u64::from(t.day()), 2);
    out.byte(b'T');
    pad(out, u64::from(t.hour()), 2);
    out.byte(b':');
    pad(out, u64::from(t.minute()), 2);
    out.byte(b':');
    pad(out, u64::from(t.second()), 2);
    out.byte(b'.');
    pad(out, u64::from(micros), 6);
    out.put(b"Z\"");
    valid
}

/// The text of the last minute written, `"YYYY-MM-DDTHH:MM:`: the events
/// of a log mostly share it with the one before, and its digits were most
/// of what a timestamp cost.
#[derive(Debug)]
pub(crate) struct MinuteMemo {
    /// The minute's fields with the top bit set; zero before the first,
    /// and always when it keeps nothing.
    key: u64,
    text: [u8; 18],
    /// What of a minute's key is kept: all of it, or with caches off
    /// nothing, so that no minute is found kept (a key has its top bit
    /// set) and each timestamp's text is made whole, with no test more
    /// than a memo that keeps.
    keep: u64,
    /// Minutes kept.
    kept: u64,
}

impl MinuteMemo {
    /// A memo that keeps the last minute with [`Caches::On`], and none
    /// with [`Caches::Off`].
    pub(crate) fn keeping(caches: Caches) -> Self {
        Self {
            key: 0,
            text: [0; 18],
            keep: match caches {
                Caches::On => u64::MAX,
                Caches::Off => 0,
            },
            kept: 0,
        }
    }

    /// Minutes whose text it kept (each written again while the minute
    /// lasts).
    pub(crate) fn kept(&self) -> u64 {
        self.kept
    }

    /// [`push_timestamp`], with the minute's text reused when it repeats.
    #[inline]
    pub(crate) fn put<P: Put>(&mut self, out: &mut P, t: &TimeStamp, compat: Compat) -> bool {
        let fields = [t.month(), t.day(), t.hour(), t.minute(), t.second()];
        if t.year() > 9999 || fields.iter().any(|&f| f > 99) {
            return put_padded(out, t, compat);
        }
        let key = 1 << 63
            | u64::from(t.year()) << 32
            | u64::from(t.month()) << 24
            | u64::from(t.day()) << 16
            | u64::from(t.hour()) << 8
            | u64::from(t.minute());
        if key != self.key {
            let [y0, y1, y2, y3] = digits::<4>(u32::from(t.year()));
            let [mo0, mo1] = digits::<2>(u32::from(t.month()));
            let [d0, d1] = digits::<2>(u32::from(t.day()));
            let [h0, h1] = digits::<2>(u32::from(t.hour()));
            let [mi0, mi1] = digits::<2>(u32::from(t.minute()));
            self.text = [
                b'"', y0, y1, y2, y3, b'-', mo0, mo1, b'-', d0, d1, b'T', h0, h1, b':', mi0, mi1,
                b':',
            ];
            self.key = key & self.keep;
            self.kept += self.keep & 1;
        }
        out.put(&self.text);
        let (micros, valid) = written_micros(t, compat);
        let [s0, s1] = digits::<2>(u32::from(t.second()));
        let [u0, u1, u2, u3, u4, u5] = digits::<6>(micros);
        out.put(&[s0, s1, b'.', u0, u1, u2, u3, u4, u5, b'Z', b'"']);
        valid
    }
}

/// The microseconds written for `t`, and whether its subsecond is valid.
fn written_micros(t: &TimeStamp, compat: Compat) -> (u32, bool) {
    let valid = t.subsecond() <= MAX_SUBSECOND;
    let micros = match compat {
        Compat::Reference => 0,
        Compat::Sane if valid => t.subsecond() / 10,
        Compat::Sane => 0,
    };
    (micros, valid)
}

/// `00` to `99`: two digits a lookup, which halves the divisions of a
/// timestamp and the chain of them each digit waited for.
// Indexing in a constant: out of range would fail the build, not a run.
#[allow(clippy::indexing_slicing)]
static PAIRS: [[u8; 2]; 100] = {
    let mut pairs = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        pairs[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    pairs
};

/// The last `N` decimal digits of `v`, zero-padded.
#[inline(always)]
fn digits<const N: usize>(mut v: u32) -> [u8; N] {
    let mut out = [b'0'; N];
    let mut end = N;
    while end >= 2 {
        let pair = PAIRS.get((v % 100) as usize).copied().unwrap_or([b'0'; 2]);
        if let Some(slot) = out.get_mut(end - 2..end) {
            slot.copy_from_slice(&pair);
        }
        v /= 100;
        end -= 2;
    }
    if let (1, Some(first)) = (end, out.first_mut()) {
        *first = b'0' + (v % 10) as u8;
    }
    out
}

/// `v` in at least `width` digits, zero-padded (widths up to 6).
fn pad<P: Put>(out: &mut P, v: u64, width: usize) {
    let mut digits = [b'0'; 6];
    let mut n = v;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
    }
    if n > 0 || width > digits.len() {
        // Wider than the field (a corrupt year, say): every digit.
        put_u64(out, v);
        return;
    }
    let significant = digits
        .iter()
        .position(|&d| d != b'0')
        .map_or(1, |first| digits.len() - first);
    let skip = digits.len() - significant.max(width);
    out.put(digits.get(skip..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_the_last_n_zero_padded() {
        let mut rng = fb_tests::Rng::new(3);
        let values = (0..10_000u32)
            .chain([
                99,
                100,
                999,
                1000,
                9999,
                10_000,
                99_999,
                999_999,
                9_999_999,
                u32::MAX,
            ])
            .chain((0..10_000).map(|_| rng.next() as u32));
        for v in values {
            assert_eq!(digits::<2>(v), *format!("{:02}", v % 100).as_bytes(), "{v}");
            assert_eq!(
                digits::<4>(v),
                *format!("{:04}", v % 10_000).as_bytes(),
                "{v}"
            );
            assert_eq!(
                digits::<6>(v),
                *format!("{:06}", v % 1_000_000).as_bytes(),
                "{v}"
            );
            assert_eq!(
                digits::<3>(v),
                *format!("{:03}", v % 1000).as_bytes(),
                "{v}"
            );
        }
    }

    #[test]
    fn the_minute_memo_writes_what_put_timestamp_writes() {
        let (mut memo, mut none) = (
            MinuteMemo::keeping(Caches::On),
            MinuteMemo::keeping(Caches::Off),
        );
        let mut rng = fb_tests::Rng::new(7);
        let mut t = TimeStamp::new(0, 0, 0, 0, 0, 0, 0);
        for i in 0..20_000 {
            // Runs of one minute, and every field's corners now and then.
            if i % 5 == 0 {
                let pick = |rng: &mut fb_tests::Rng, corners: &[u32], below: usize| {
                    if rng.below(4) == 0 {
                        corners[rng.below(corners.len())]
                    } else {
                        rng.below(below) as u32
                    }
                };
                t = TimeStamp::new(
                    pick(&mut rng, &[0, 1, 9999, 10_000, 65_535], 3000) as u16,
                    pick(&mut rng, &[0, 1, 12, 99, 100, 255], 13) as u8,
                    pick(&mut rng, &[0, 1, 31, 99, 100, 255], 32) as u8,
                    pick(&mut rng, &[0, 23, 99, 100, 255], 24) as u8,
                    pick(&mut rng, &[0, 59, 99, 100, 255], 60) as u8,
                    0,
                    0,
                );
            }
            let second = if rng.below(8) == 0 {
                [0, 59, 99, 100, 255][rng.below(5)]
            } else {
                rng.below(60) as u8
            };
            let sub = if rng.below(8) == 0 {
                [0, 9_999_999, 10_000_000, u32::MAX][rng.below(4)]
            } else {
                rng.below(10_000_000) as u32
            };
            let t = TimeStamp::new(
                t.year(),
                t.month(),
                t.day(),
                t.hour(),
                t.minute(),
                second,
                sub,
            );
            for compat in [Compat::Sane, Compat::Reference] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let valid = memo.put(&mut a, &t, compat);
                assert_eq!(valid, push_timestamp(&mut b, &t, compat));
                assert_eq!(a, b, "{t:?}");
                let mut c = Vec::new();
                assert_eq!(none.put(&mut c, &t, compat), valid);
                assert_eq!(c, b, "{t:?}, kept nothing");
            }
        }
        // Runs of five timestamps in one minute, in both modes: a minute
        // kept serves at least nine of each ten.
        assert!(
            memo.kept() > 0 && memo.kept() < 20_000 * 2 / 9,
            "{}",
            memo.kept()
        );
        assert_eq!(none.kept(), 0);
    }

    #[test]
    fn keys_order_like_calendar_time() {
        let a = TimeStamp::new(2021, 12, 31, 23, 59, 59, 5);
        let b = TimeStamp::new(2022, 1, 1, 0, 0, 0, 0);
        assert!(key(&a) < key(&b));
        assert_eq!(key(&TimeStamp::new(1970, 1, 1, 0, 0, 1, 0)), (1, 0));
        assert_eq!(key(&TimeStamp::new(2000, 3, 1, 0, 0, 0, 0)).0, 951_868_800);
    }

    #[test]
    fn a_day_gives_the_micros_of_its_times_and_others() {
        let base = TimeStamp::new(2021, 5, 18, 13, 28, 29, 6_560_000);
        let day = Day::of_key(&base, key(&base));
        for (name, t) in [
            ("itself", base),
            (
                "same day, later",
                TimeStamp::new(2021, 5, 18, 23, 59, 59, 9_999_999),
            ),
            ("same day, earlier", TimeStamp::new(2021, 5, 18, 0, 0, 0, 0)),
            (
                "same day, invalid subsecond",
                TimeStamp::new(2021, 5, 18, 13, 30, 0, 10_000_000),
            ),
            (
                "same day, subsecond u32::MAX",
                TimeStamp::new(2021, 5, 18, 13, 30, 0, u32::MAX),
            ),
            (
                "same day, fields past their range",
                TimeStamp::new(2021, 5, 18, 255, 255, 255, 0),
            ),
            ("next day", TimeStamp::new(2021, 5, 19, 0, 0, 1, 10)),
            ("day before", TimeStamp::new(2021, 5, 17, 23, 59, 59, 0)),
            ("other month", TimeStamp::new(2021, 6, 18, 13, 28, 29, 0)),
            ("other year", TimeStamp::new(2022, 5, 18, 13, 28, 29, 0)),
            (
                "other day, invalid subsecond",
                TimeStamp::new(2021, 6, 1, 0, 0, 0, 10_000_000),
            ),
            ("a clamped day", TimeStamp::new(2021, 5, 200, 1, 2, 3, 4)),
            ("a clamped month", TimeStamp::new(2021, 0, 18, 1, 2, 3, 4)),
        ] {
            assert_eq!(day.micros(&t), micros(&t), "{name}");
            assert_eq!(day.key(&t), key(&t), "{name}");
        }
        // Days whose fields are clamped by the calendar: the day's own
        // times still match, and so do the days the clamp maps them to.
        for (name, b) in [
            ("day 0", TimeStamp::new(2021, 5, 0, 12, 0, 0, 0)),
            ("month 13", TimeStamp::new(2021, 13, 5, 12, 0, 0, 0)),
            ("year 0", TimeStamp::new(0, 1, 1, 0, 0, 0, 0)),
            (
                "year 65535",
                TimeStamp::new(65_535, 12, 31, 23, 59, 59, 9_999_999),
            ),
        ] {
            let day = Day::of_key(&b, key(&b));
            for t in [
                b,
                TimeStamp::new(b.year(), b.month(), b.day(), 0, 0, 0, 0),
                TimeStamp::new(b.year(), b.month(), b.day(), 23, 1, 2, 10_000_000),
                TimeStamp::new(
                    b.year(),
                    b.month().clamp(1, 12),
                    b.day().clamp(1, 31),
                    5,
                    0,
                    0,
                    0,
                ),
            ] {
                assert_eq!(day.micros(&t), micros(&t), "{name}: {t:?}");
                assert_eq!(day.key(&t), key(&t), "{name}: {t:?}");
            }
        }
        let mut rng = fb_tests::Rng::new(11);
        for _ in 0..20_000 {
            let mut t = || {
                TimeStamp::new(
                    2020 + rng.below(2) as u16,
                    1 + rng.below(2) as u8,
                    [1, 31, 30, 28, 29][rng.below(5)],
                    rng.below(24) as u8,
                    rng.below(60) as u8,
                    rng.below(60) as u8,
                    [0, 9_999_999, 10_000_000, rng.below(10_000_000) as u32][rng.below(4)],
                )
            };
            let (b, o) = (t(), t());
            let day = Day::of_key(&b, key(&b));
            assert_eq!(day.micros(&o), micros(&o), "{b:?} then {o:?}");
            assert_eq!(day.key(&o), key(&o), "{b:?} then {o:?}");
        }
    }

    #[test]
    fn text_forms() {
        let t = TimeStamp::new(2021, 5, 18, 13, 28, 29, 6_560_000);
        let mut out = Vec::new();
        push_timestamp(&mut out, &t, Compat::Reference);
        assert_eq!(out, b"\"2021-05-18T13:28:29.000000Z\"");
        out.clear();
        push_timestamp(&mut out, &t, Compat::Sane);
        assert_eq!(out, b"\"2021-05-18T13:28:29.656000Z\"");
        out.clear();
        let odd = TimeStamp::new(12345, 1, 2, 3, 4, 5, 70);
        push_timestamp(&mut out, &odd, Compat::Sane);
        assert_eq!(out, b"\"12345-01-02T03:04:05.000007Z\"");
        out.clear();
        let corrupt = TimeStamp::new(7, 13, 200, 3, 4, 255, 9_999_999);
        push_timestamp(&mut out, &corrupt, Compat::Sane);
        assert_eq!(out, b"\"0007-13-200T03:04:255.999999Z\"");
        out.clear();
        let bad = TimeStamp::new(2021, 5, 18, 13, 28, 29, 10_000_000);
        assert!(!push_timestamp(&mut out, &bad, Compat::Sane));
        assert_eq!(out, b"\"2021-05-18T13:28:29.000000Z\"");
    }
}
