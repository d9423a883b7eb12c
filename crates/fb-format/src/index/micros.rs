//! Event times as microseconds since 1970, as the index keeps them.

use fb_schema::TimeStamp;

/// Microseconds since 1970 of a timestamp (subseconds as the writers
/// store them: tenths of a microsecond).
pub fn micros(t: &TimeStamp) -> i64 {
    from_day(day_seconds(t), t)
}

/// Seconds since 1970 of the start of `t`'s day.
fn day_seconds(t: &TimeStamp) -> i64 {
    let days = fb_schema::calendar::days_from_civil(
        i64::from(t.year()),
        u32::from(t.month()),
        u32::from(t.day()),
    );
    days * 86_400
}

/// [`micros`] of `t`, given the seconds of the start of its day.
fn from_day(day: i64, t: &TimeStamp) -> i64 {
    (day + i64::from(t.hour()) * 3_600 + i64::from(t.minute()) * 60 + i64::from(t.second()))
        .saturating_mul(1_000_000)
        .saturating_add(i64::from(t.subsecond() / 10))
}

/// [`micros`], remembering the last day met: the calendar was a good part
/// of what `fb index` computed (bench/NOTES.md). A day, not a minute: an
/// outcome comes minutes
/// after its decision, often in the same message, and the two alternate.
#[derive(Default)]
pub(super) struct Micros {
    /// Year, month and day of the last timestamp, and the seconds of
    /// that day's start.
    last: Option<(u32, i64)>,
}

impl Micros {
    pub(super) fn of(&mut self, t: &TimeStamp) -> i64 {
        let key = u32::from(t.year()) << 16 | u32::from(t.month()) << 8 | u32::from(t.day());
        let day = match self.last {
            Some((k, day)) if k == key => day,
            _ => {
                let day = day_seconds(t);
                self.last = Some((key, day));
                day
            }
        };
        from_day(day, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_days_give_the_calendar_s_micros() {
        // Runs within a minute, across minutes, hours, days, months and
        // years, and fields no calendar has (month 0 or 13, hour 25):
        // whatever they mean, the memo must mean the same.
        let mut times = Vec::new();
        for (y, mo, d, h, mi) in [
            (2024u16, 1u8, 1u8, 0u8, 0u8),
            (2024, 1, 1, 0, 1),
            (2024, 1, 1, 0, 1),
            (2024, 12, 31, 23, 59),
            (2025, 1, 1, 0, 0),
            (2024, 2, 29, 12, 30),
            (1970, 1, 1, 0, 0),
            (1, 1, 1, 0, 0),
            (65535, 13, 40, 25, 61),
            (2024, 0, 0, 0, 0),
            (2024, 1, 1, 0, 0),
        ] {
            for (sec, sub) in [(0u8, 0u32), (59, 9_999_999), (7, 12_345), (255, u32::MAX)] {
                times.push(TimeStamp::new(y, mo, d, h, mi, sec, sub));
            }
        }
        let mut memo = Micros::default();
        for t in times.iter().chain(times.iter().rev()) {
            assert_eq!(memo.of(t), micros(t), "{t:?}");
        }
    }
}
