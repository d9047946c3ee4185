//! Durations as users type them: `30s`, `5m`, `1h`, `14d`, `500ms`.

use crate::MonitorError;
use std::time::Duration;

/// Parses `N` followed by `ms`, `s`, `m`, `h` or `d` (a bare number is seconds).
pub fn parse(text: &str) -> Result<Duration, MonitorError> {
    let t = text.trim();
    let bad = || {
        MonitorError::BadDuration(format!(
            "{text:?} is not a duration (write 30s, 5m, 1h, 14d or 500ms)"
        ))
    };
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs <= 0.0 || secs > 10.0 * 365.0 * 86400.0 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `90s` → `1m30s`, as short as it gets.
pub fn show(d: Duration) -> String {
    let s = d.as_secs();
    if s == 0 {
        return format!("{}ms", d.as_millis());
    }
    let (days, h, m, sec) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    let mut out = String::new();
    for (v, u) in [(days, "d"), (h, "h"), (m, "m"), (sec, "s")] {
        if v > 0 {
            out.push_str(&format!("{v}{u}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_rejects_nonsense() {
        assert_eq!(parse("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse("14d").unwrap(), Duration::from_secs(14 * 86400));
        assert_eq!(parse("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse("45").unwrap(), Duration::from_secs(45));
        for bad in ["", "s", "0s", "-5s", "5 parsecs", "1e400s", "nan"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(show(Duration::from_secs(90)), "1m30s");
    }
}
