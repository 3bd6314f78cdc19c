//! The values the lab's servers' flags take (the replicas' `payments`, and the outbox's `documents`,
//! `dispatcher` and `converter`), parsed into types before anything is opened, and the one line
//! a binary prints when it refuses one.
//!
//! A server that starts with a mistyped retention would keep keys for a time nobody chose, and
//! one that created its database before noticing a bad flag would leave a file behind. So every
//! value is checked here first, and each refusal reads as one line naming what was expected.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use retrykey_program::flags::{Span, positive};
//!
//! assert_eq!("500ms".parse::<Span>().unwrap().0, Duration::from_millis(500));
//! assert_eq!("24h".parse::<Span>().unwrap().0, Duration::from_secs(86_400));
//! assert!("10".parse::<Span>().is_err()); // a unit is required
//! assert_eq!(positive("2"), Ok(2));
//! assert!(positive("0").is_err());
//! ```

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// A duration written as a whole number and a unit: `500ms`, `30s`, `10m`, `24h`.
///
/// Only these four units, and no bare numbers: `--lease 10` could mean seconds or
/// milliseconds, and a lease a thousand times too short takes keys from live replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(pub Duration);

impl FromStr for Span {
    type Err = FlagError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || FlagError::Duration(text.to_owned());
        let digits = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let (number, unit) = text.split_at(digits);
        // `u64::from_str` accepts a leading `+`; the split above has already refused it.
        let number: u64 = number.parse().map_err(|_| bad())?;
        let millis_per = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad()),
        };
        let millis = number.checked_mul(millis_per).ok_or_else(bad)?;
        if millis == 0 {
            return Err(FlagError::ZeroDuration(text.to_owned()));
        }
        Ok(Self(Duration::from_millis(millis)))
    }
}

/// A count above zero (`--max-entries`, `--max-bytes`): a store that may hold nothing would
/// refuse every key, which is never what a flag meant.
pub fn positive(text: &str) -> Result<usize, FlagError> {
    match text.parse::<usize>() {
        Ok(0) | Err(_) => Err(FlagError::Count(text.to_owned())),
        Ok(count) => Ok(count),
    }
}

/// The largest request head a server reads (`--max-head-bytes`), at least 8 KiB: the server's
/// read buffer is as large as the limit, and hyper refuses a buffer under 8 KiB.
pub fn head_bytes(text: &str) -> Result<usize, FlagError> {
    match text.parse::<usize>() {
        Ok(bytes) if bytes >= 8192 => Ok(bytes),
        _ => Err(FlagError::HeadBytes(text.to_owned())),
    }
}

/// A PostgreSQL schema name (`--pg-schema`): the same rule as the store's, checked here so
/// that a bad name is refused before any connection is made.
pub fn schema_name(text: &str) -> Result<String, FlagError> {
    let mut chars = text.chars();
    let first = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if first && rest && text.len() <= 63 {
        Ok(text.to_owned())
    } else {
        Err(FlagError::Schema(text.to_owned()))
    }
}

/// A database named by a `--db` flag: `sqlite:PATH`, or `postgres` with its URL in
/// `RETRYKEY_PG_URL` (a password does not belong on a command line, where `ps` shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// A SQLite file: every process on this machine that opens it.
    Sqlite(PathBuf),
    /// A PostgreSQL database, reached with this URL.
    Postgres(String),
}

impl Database {
    /// Parses a `--db` value; `postgres` takes its URL from `url` (`RETRYKEY_PG_URL`).
    pub fn parse(value: &str, url: Option<String>) -> Result<Self, FlagError> {
        match value {
            "postgres" => url
                .filter(|url| !url.trim().is_empty())
                .map(Self::Postgres)
                .ok_or(FlagError::NoPgUrl),
            _ => match value.strip_prefix("sqlite:") {
                Some("") => Err(FlagError::NoSqlitePath),
                Some(path) => Ok(Self::Sqlite(PathBuf::from(path))),
                None => Err(FlagError::Database(value.to_owned())),
            },
        }
    }
}

impl FromStr for Database {
    type Err = FlagError;

    /// Parses a `--db` value, reading `RETRYKEY_PG_URL` for `postgres`.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Self::parse(value, std::env::var("RETRYKEY_PG_URL").ok())
    }
}

/// Why a flag's value was refused; the text follows `payments: --<flag>: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// Not a whole number followed by ms, s, m or h.
    #[error("expected a duration like 500ms, 30s, 10m or 24h, got {0:?}")]
    Duration(String),
    /// A duration of zero.
    #[error("expected a duration above zero, like 500ms, 30s, 10m or 24h, got {0:?}")]
    ZeroDuration(String),
    /// Not a whole number above zero.
    #[error("expected a whole number above zero, got {0:?}")]
    Count(String),
    /// Not a whole number of at least 8192.
    #[error("expected a whole number of bytes, at least 8192, got {0:?}")]
    HeadBytes(String),
    /// Not a plain lower-case identifier.
    #[error(
        "expected a schema name of lower-case letters, digits and _ (not a digit first, at most 63 bytes), got {0:?}"
    )]
    Schema(String),
    /// Not one of a fixed set of names (a binary's crash points, say).
    #[error("expected {expected}, got {got:?}")]
    OneOf {
        /// The accepted names, as a phrase: "sent" or "a, b or c".
        expected: &'static str,
        /// What was given.
        got: String,
    },
    /// Not a database form.
    #[error("expected sqlite:PATH or postgres, got {0:?}")]
    Database(String),
    /// `sqlite:` with nothing after it.
    #[error("sqlite: needs a file path, as in sqlite:/tmp/documents.sqlite")]
    NoSqlitePath,
    /// `postgres` without `RETRYKEY_PG_URL`.
    #[error("postgres needs RETRYKEY_PG_URL, as in postgres://user:password@127.0.0.1:5432/db")]
    NoPgUrl,
    /// A value of a program's own type (the replicas' `--store`, say), refused by that type's
    /// parser in words that already say what it expected.
    #[error("{0}")]
    Refused(String),
}

/// A clap error as one line. Clap's own text runs over several lines (usage, a hint), which a
/// script reading stderr would have to cut; for a refused value the flag and our own reason
/// say everything.
pub fn one_line(error: &clap::Error) -> String {
    let flag = match error.get(ContextKind::InvalidArg) {
        // "--retention <DUR>": the flag without its placeholder.
        Some(ContextValue::String(arg)) => arg.split(' ').next().map(str::to_owned),
        _ => None,
    };
    let value = match error.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(value)) => value.as_str(),
        _ => "",
    };
    match (error.kind(), flag, std::error::Error::source(error)) {
        // Our own refusals say what they expected; a standard parser's (--listen) does not
        // name the value it refused.
        (ErrorKind::ValueValidation, Some(flag), Some(reason)) if reason.is::<FlagError>() => {
            format!("{flag}: {reason}")
        }
        (ErrorKind::ValueValidation, Some(flag), Some(reason)) => {
            format!("{flag}: {reason}, got {value:?}")
        }
        _ => {
            let text = error.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            format!("{} (see --help)", first.trim_start_matches("error: "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(text: &str) -> Result<Duration, FlagError> {
        text.parse::<Span>().map(|span| span.0)
    }

    // Each of the four units reads as written.
    #[test]
    fn each_unit_reads_as_written() {
        assert_eq!(span("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(span("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(span("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(span("24h"), Ok(Duration::from_secs(86_400)));
    }

    // A bare number, an unknown unit, a sign, a space, a fraction or nothing at all is refused.
    #[test]
    fn anything_else_is_refused_with_the_text_given() {
        for text in [
            "", "10", "ms", "x", "5d", "5 s", " 5s", "5s ", "+5s", "-5s", "1.5s", "5S", "5sec",
            "5mss",
        ] {
            assert_eq!(
                span(text),
                Err(FlagError::Duration(text.to_owned())),
                "{text:?}"
            );
        }
    }

    // A duration too long to count in milliseconds is refused, not wrapped around.
    #[test]
    fn an_overflowing_duration_is_refused() {
        let text = format!("{}h", u64::MAX / 1_000);
        assert_eq!(span(&text), Err(FlagError::Duration(text.clone())));
        assert_eq!(
            span(&format!("{}ms", u64::MAX)),
            Ok(Duration::from_millis(u64::MAX))
        );
    }

    // Zero, in any unit, is refused: no lease or retention of zero makes sense.
    #[test]
    fn zero_is_refused() {
        assert_eq!(span("0s"), Err(FlagError::ZeroDuration("0s".to_owned())));
        assert_eq!(
            span("000ms"),
            Err(FlagError::ZeroDuration("000ms".to_owned()))
        );
    }

    // Counts are whole numbers above zero.
    #[test]
    fn counts_are_whole_and_above_zero() {
        assert_eq!(positive("1"), Ok(1));
        assert_eq!(positive("65536"), Ok(65_536));
        for text in ["0", "", "-1", "1.5", "two", "1e3", " 1"] {
            assert_eq!(
                positive(text),
                Err(FlagError::Count(text.to_owned())),
                "{text:?}"
            );
        }
    }

    // Schema names are plain lower-case identifiers: nothing to quote, nothing to inject.
    #[test]
    fn schema_names_are_plain_identifiers() {
        for name in ["retrykey_http", "_x", "class_2", &"a".repeat(63)] {
            assert_eq!(schema_name(name), Ok(name.to_owned()));
        }
        for name in [
            "",
            "2class",
            "Class",
            "a-b",
            "a;drop",
            "a b",
            &"a".repeat(64),
        ] {
            assert_eq!(
                schema_name(name),
                Err(FlagError::Schema(name.to_owned())),
                "{name:?}"
            );
        }
    }

    // A database is a SQLite path or postgres with a URL; anything else is refused by name.
    #[test]
    fn databases_by_form() {
        let url = || Some("postgres://u:p@127.0.0.1/db".to_owned());
        assert_eq!(
            Database::parse("sqlite:/tmp/d.sqlite", None),
            Ok(Database::Sqlite(PathBuf::from("/tmp/d.sqlite")))
        );
        assert_eq!(
            Database::parse("postgres", url()),
            Ok(Database::Postgres(url().unwrap()))
        );
        assert_eq!(Database::parse("postgres", None), Err(FlagError::NoPgUrl));
        assert_eq!(
            Database::parse("postgres", Some(" ".into())),
            Err(FlagError::NoPgUrl)
        );
        assert_eq!(
            Database::parse("sqlite:", url()),
            Err(FlagError::NoSqlitePath)
        );
        for value in ["", "memory", "sqlite", "postgres://u@h/db", "SQLITE:/x"] {
            assert_eq!(
                Database::parse(value, url()),
                Err(FlagError::Database(value.to_owned())),
                "{value:?}"
            );
        }
    }
}
