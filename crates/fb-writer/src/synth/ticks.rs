//! Times of the synthetic logs, in 100 ns ticks since 1970.

use fb_schema::calendar::{civil_from_days, days_from_civil};
use fb_schema::TimeStamp;

/// 100-nanosecond ticks per second (the unit of `TimeStamp.subsecond`).
pub const TICKS_PER_SECOND: u64 = 10_000_000;

/// The UTC `TimeStamp` of a time given in 100 ns ticks since 1970-01-01.
pub fn timestamp_from_ticks(ticks: u64) -> TimeStamp {
    let secs = ticks / TICKS_PER_SECOND;
    let subsecond = (ticks % TICKS_PER_SECOND) as u32;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(i64::try_from(days).unwrap_or(i64::MAX / 2));
    TimeStamp::new(
        u16::try_from(year).unwrap_or(u16::MAX),
        month as u8,
        day as u8,
        (rem / 3600) as u8,
        (rem % 3600 / 60) as u8,
        (rem % 60) as u8,
        subsecond,
    )
}

/// Ticks since 1970-01-01 of a UTC date and time (from 1970 on: earlier
/// dates give 0).
pub fn ticks_from_civil(year: u16, month: u8, day: u8, hour: u8, minute: u8, second: u8) -> u64 {
    let days = days_from_civil(i64::from(year), u32::from(month), u32::from(day));
    let days = u64::try_from(days).unwrap_or(0);
    let secs = days * 86_400 + u64::from(hour) * 3600 + u64::from(minute) * 60 + u64::from(second);
    secs * TICKS_PER_SECOND
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for (y, mo, d, h, mi, s) in [
            (1970, 1, 1, 0, 0, 0),
            (2000, 2, 29, 23, 59, 59),
            (2024, 1, 1, 0, 0, 0),
            (2024, 12, 31, 12, 30, 1),
            (2100, 3, 1, 1, 2, 3),
        ] {
            let ticks = ticks_from_civil(y, mo, d, h, mi, s) + 1234;
            let ts = timestamp_from_ticks(ticks);
            assert_eq!(
                (
                    ts.year(),
                    ts.month(),
                    ts.day(),
                    ts.hour(),
                    ts.minute(),
                    ts.second(),
                    ts.subsecond()
                ),
                (y, mo, d, h, mi, s, 1234)
            );
        }
        assert_eq!(
            ticks_from_civil(2024, 1, 1, 0, 0, 0),
            1_704_067_200 * TICKS_PER_SECOND
        );
    }
}
