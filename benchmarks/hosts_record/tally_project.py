"""A third scratch project: ``tally``, a small Rust crate (no dependencies, built with
``cargo --offline``) that formats time spans; sessions add a duration parser to it."""

from __future__ import annotations

CARGO_TOML = """\
[package]
name = "tally"
version = "0.1.0"
edition = "2021"

[dependencies]
"""

LIB = """\
//! Time tracking helpers.

pub mod format;
"""

FORMAT = """\
//! Formatting of time spans.

/// `5400` -> `"1h30m"`; spans under a minute print as seconds.
pub fn format_seconds(total: u64) -> String {
    let (hours, minutes, seconds) = (total / 3600, total % 3600 / 60, total % 60);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, _) => format!("{minutes}m"),
        _ => format!("{hours}h{minutes:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::format_seconds;

    #[test]
    fn formats_hours_and_minutes() {
        assert_eq!(format_seconds(5400), "1h30m");
    }

    #[test]
    fn formats_short_spans_as_seconds() {
        assert_eq!(format_seconds(42), "42s");
    }
}
"""

MAIN = """\
use std::env;

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    let total: u64 = args.iter().filter_map(|a| a.parse::<u64>().ok()).sum();
    println!("{}", tally::format::format_seconds(total));
}
"""

# The parser as first written: it returns the bare total where an Option is due (E0308),
# and the hour arm multiplies by 60 (a copy of the minute arm).
DURATION = """\
//! Parsing of time spans such as `1h30m` or `90s`.

/// Seconds in `text` (units h, m, s; e.g. `1h30m`), or None when it does not parse.
pub fn parse_duration(text: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut number = String::new();
    for ch in text.trim().chars() {
        if ch.is_ascii_digit() {
            number.push(ch);
            continue;
        }
        let value: u64 = number.parse().ok()?;
        number.clear();
        total += match ch {
            'h' => value * 60,
            'm' => value * 60,
            's' => value,
            _ => return None,
        };
    }
    if !number.is_empty() {
        return None;
    }
    total
}
"""

FIX_E0308 = (
    "        return None;\n    }\n    total\n}",
    "        return None;\n    }\n    Some(total)\n}",
)
EDIT_LIB_MOD = ("pub mod format;\n", "pub mod duration;\npub mod format;\n")

DURATION_TESTS = """
#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn parses_plain_seconds() {
        assert_eq!(parse_duration("90s"), Some(90));
    }

    #[test]
    fn parses_hours_and_minutes() {
        assert_eq!(parse_duration("1h30m"), Some(5400), "1h30m should be 5400 seconds");
    }

    #[test]
    fn rejects_unknown_unit() {
        assert_eq!(parse_duration("3d"), None);
    }
}
"""
ADD_TESTS = ("    Some(total)\n}\n", "    Some(total)\n}\n" + DURATION_TESTS)
# A wrong fix: the digits are not the problem.
WRONG_FIX_DIGITS = (
    "let value: u64 = number.parse().ok()?;",
    "let value: u64 = number.trim().parse().ok()?;",
)
EDIT_README_DURATIONS = (
    "# scratch project\n",
    "# tally\n\nTime tracking helpers.\n\nDurations: `90s`, `45m`, `1h30m` (units h, m, s).\n",
)


def base() -> dict[str, str]:
    """The crate as committed before the session starts (its tests pass)."""
    return {
        "Cargo.toml": CARGO_TOML,
        ".gitignore": "/target\n",
        "src/lib.rs": LIB,
        "src/format.rs": FORMAT,
        "src/main.rs": MAIN,
    }
