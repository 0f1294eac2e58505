//! Time types and overflow-free time arithmetic.
//!
//! Event time and processing time are both milliseconds since the Unix epoch in an `i64`.
//! Watermarks start at [`MIN_WATERMARK`] (`i64::MIN`, "nothing is known yet") and a bounded
//! input ends with [`MAX_WATERMARK`] (`i64::MAX`, "no more elements"). Arithmetic near those
//! edges must never wrap: a wrapped watermark would jump from the far future to the far past and
//! fire or drop everything. Every helper here saturates instead (Flink's bounded-out-of-orderness
//! generator has the same concern: it starts from `Long.MIN_VALUE + delay + 1`).

/// A point in time: milliseconds since the Unix epoch (UTC), event or processing time.
pub type Timestamp = i64;

/// The watermark before anything is known: `i64::MIN` (Flink's `Long.MIN_VALUE`).
pub const MIN_WATERMARK: Timestamp = i64::MIN;

/// The watermark that ends a bounded input and fires every pending event-time timer:
/// `i64::MAX` (Flink's `Watermark.MAX_WATERMARK`).
pub const MAX_WATERMARK: Timestamp = i64::MAX;

/// `t + d`, saturating at `i64::MIN`/`i64::MAX` instead of wrapping.
///
/// # Examples
/// ```
/// use window_core::time::add;
/// assert_eq!(add(5, 3), 8);
/// assert_eq!(add(i64::MAX - 1, 10), i64::MAX);
/// ```
#[must_use]
#[inline]
pub fn add(t: Timestamp, d: i64) -> Timestamp {
    t.saturating_add(d)
}

/// `t - d`, saturating at `i64::MIN`/`i64::MAX` instead of wrapping.
///
/// # Examples
/// ```
/// use window_core::time::sub;
/// assert_eq!(sub(i64::MIN + 1, 10), i64::MIN);
/// ```
#[must_use]
#[inline]
pub fn sub(t: Timestamp, d: i64) -> Timestamp {
    t.saturating_sub(d)
}

/// Formats a timestamp for messages: `MIN`/`MAX` for the watermark sentinels, else the number.
#[must_use]
pub fn display(t: Timestamp) -> String {
    match t {
        MIN_WATERMARK => "MIN".to_owned(),
        MAX_WATERMARK => "MAX".to_owned(),
        t => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturates_at_both_ends() {
        assert_eq!(add(i64::MAX, 1), i64::MAX);
        assert_eq!(sub(i64::MIN, 1), i64::MIN);
        assert_eq!(add(i64::MIN, -1), i64::MIN);
        assert_eq!(sub(-5, 10), -15);
        assert_eq!(display(MIN_WATERMARK), "MIN");
        assert_eq!(display(42), "42");
    }
}
