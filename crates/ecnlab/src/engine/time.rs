//! Simulated time: an integer count of nanoseconds since the start of the run.

/// Nanoseconds since the start of the run.
pub type SimTime = u64;

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_S: u64 = 1_000_000_000;

/// Converts seconds (as configured) to nanoseconds, rounding to the nearest nanosecond.
pub fn from_secs(s: f64) -> SimTime {
    (s * NS_PER_S as f64).round() as SimTime
}

/// Converts milliseconds to nanoseconds, rounding to the nearest nanosecond.
pub fn from_millis(ms: f64) -> SimTime {
    (ms * NS_PER_MS as f64).round() as SimTime
}

pub fn to_secs(t: SimTime) -> f64 {
    t as f64 / NS_PER_S as f64
}

/// Serialization time of `bytes` on a link of `rate_bps`, rounded up to a whole nanosecond
/// so a link never runs faster than its rate.
#[inline]
pub fn tx_time(bytes: u32, rate_bps: u64) -> SimTime {
    // bytes * 8e9 < 2^64 for any packet under 2.3 GB: 64-bit division is exact and far
    // cheaper than 128-bit.
    (bytes as u64 * 8 * NS_PER_S).div_ceil(rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_is_exact_or_rounded_up() {
        // 1500 B at 10 Mb/s = 1.2 ms exactly.
        assert_eq!(tx_time(1500, 10_000_000), 1_200_000);
        // 1 B at 3 b/s = 8/3 s, rounded up.
        assert_eq!(tx_time(1, 3), 2_666_666_667);
        assert_eq!(from_secs(1.5), 1_500_000_000);
        assert_eq!(from_millis(0.1), 100_000);
    }
}
