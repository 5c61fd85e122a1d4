//! Units as people read them and as flags accept them. Every report uses
//! binary units: a KB is 2^10 bytes and an MB 2^20 bytes, as the method's
//! readings are (`process.memoryUsage()` / 1048576, docs/src/method.md).

pub const KB: f64 = 1024.0;
pub const MB: f64 = 1024.0 * 1024.0;

/// `16.3 MB`: one decimal, as the method prints its readings.
pub fn mb(bytes: f64) -> String {
    format!("{:.1} MB", bytes / MB)
}

/// Whole KB (2^10 bytes), rounded down, for sizes in lists.
pub fn kb(bytes: u64) -> u64 {
    bytes / 1024
}

/// A figure in MB without the unit, for table cells.
pub fn mb_cell(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / MB)
}

/// A signed per-request figure: `0.43 KB`, `52 B`, `64.0 KB`, `-3 B`.
pub fn per_request(bytes: f64) -> String {
    let magnitude = bytes.abs();
    if magnitude >= MB {
        format!("{:.2} MB", bytes / MB)
    } else if magnitude >= 10.0 * KB {
        format!("{:.1} KB", bytes / KB)
    } else if magnitude >= KB / 10.0 {
        format!("{:.2} KB", bytes / KB)
    } else {
        format!("{bytes:.0} B")
    }
}

/// Parses `20000`, `20k`, `2M`, `1.5k` request counts. A count that does
/// not fit in 64 bits is an error, never a silent saturation.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_lowercase().replace('_', "");
    let bad = || format!("{text:?} is not a count (e.g. 20000 or 20k)");
    let (digits, factor) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1_000u64),
        Some('m') => (&t[..t.len() - 1], 1_000_000),
        _ => (t.as_str(), 1),
    };
    let too_many = || format!("{text:?} is more than {} requests", u64::MAX);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits
            .parse::<u64>()
            .ok()
            .and_then(|whole| whole.checked_mul(factor))
            .ok_or_else(too_many);
    }
    let value: f64 = digits.parse().map_err(|_| bad())?;
    let count = value * factor as f64;
    // 2^53: beyond it an f64 no longer holds every whole number.
    if !(0.0..=9_007_199_254_740_992.0).contains(&count) {
        return Err(if count > 0.0 { too_many() } else { bad() });
    }
    Ok(count.round() as u64)
}

/// Parses a byte size: `512`, `0.1KB`, `64 KB`, `1.5MB`, `2GB` (binary units).
pub fn parse_bytes(text: &str) -> Result<f64, String> {
    let t = text.trim().to_ascii_lowercase();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let factor = match unit.trim() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => KB,
        "m" | "mb" | "mib" => MB,
        "g" | "gb" | "gib" => MB * 1024.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?}: use B, KB, MB or GB"
            ));
        }
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 0.1KB)"))?;
    if value < 0.0 || !value.is_finite() {
        return Err(format!("{text:?} is not a size (e.g. 0.1KB)"));
    }
    Ok(value * factor)
}

/// Parses a duration: `10s`, `500ms`, `2m`, `1h`, or plain seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim().to_ascii_lowercase();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 10s)"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?}: use ms, s, m or h"
            ));
        }
    };
    // try_from: a huge number of seconds overflows Duration (found by fuzzing).
    std::time::Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("{text:?} is not a duration (e.g. 10s)"))
}

/// "45 s", "12 min", "1.5 h": a length of time as a person says it.
pub fn human_duration(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// "2026-12-07 04:10 CET": a moment given in seconds since the Unix epoch,
/// in this machine's time zone (UTC when it has none), as a person watching
/// the process reads a clock.
pub fn clock_time(unix_s: f64) -> String {
    let Ok(moment) = jiff::Timestamp::from_second(unix_s.clamp(0.0, 2.5e11) as i64) else {
        return "an unknown time".into();
    };
    moment
        .to_zoned(jiff::tz::TimeZone::system())
        .strftime("%Y-%m-%d %H:%M %Z")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_time_has_its_date_and_minute() {
        let text = clock_time(1_796_000_000.0);
        assert!(text.starts_with("2026-"), "{text}");
        assert_eq!(text.matches(':').count(), 1, "{text}");
    }

    #[test]
    fn formats_like_the_method() {
        assert_eq!(mb(16.3 * MB), "16.3 MB");
        assert_eq!(mb_cell(7_759_462), "7.4");
        assert_eq!(per_request(443.0), "0.43 KB");
        assert_eq!(per_request(65536.0), "64.0 KB");
        assert_eq!(per_request(50.0), "50 B");
    }

    #[test]
    fn parses_flags() {
        assert_eq!(parse_count("20k").unwrap(), 20_000);
        assert_eq!(parse_count("2M").unwrap(), 2_000_000);
        assert!(parse_count("lots").is_err());
        assert_eq!(parse_count("1.5k").unwrap(), 1_500);
        assert_eq!(parse_count("18446744073709551615").unwrap(), u64::MAX);
        assert!(parse_count("18446744073709551616").is_err(), "u64::MAX + 1");
        assert!(parse_count("20000000000000000k").is_err());
        assert!(parse_count("1e30").is_err());
        assert!(parse_count("-5").is_err());
        assert_eq!(parse_bytes("0.1KB").unwrap(), 102.4);
        assert_eq!(parse_bytes("64 KB").unwrap(), 65536.0);
        assert!(parse_bytes("3 parsecs").is_err());
        assert_eq!(parse_duration("500ms").unwrap().as_millis(), 500);
        assert_eq!(parse_duration("2m").unwrap().as_secs(), 120);
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("77777777777777777777877 s").is_err());
    }
}
