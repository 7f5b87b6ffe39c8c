//! Sorting a server's failure into the closed taxonomy of `ErrorKind`, from its JSON-RPC code
//! and its text, and reading the two facts a model can act on: how long to wait before retrying
//! and which HTTP status the server's own backend answered with.
//!
//! Matching is on phrases, case-insensitive, at word boundaries. Bare numbers never decide a
//! kind: a status code counts only next to words that make it one ("HTTP 404", "status code
//! 503", "404 Not Found"), so "Found 404 results" or a port number stays neutral.

use std::sync::LazyLock;

use regex::Regex;

use crate::contract::ErrorKind;

/// What the text and code of a failure say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classification {
    pub kind: ErrorKind,
    pub retry_after_ms: Option<u64>,
    pub http_status: Option<u16>,
}

/// JSON-RPC codes a server may answer a `tools/call` with.
const INVALID_PARAMS: i64 = -32602;
/// The TypeScript SDK's `RequestTimeout`.
const SDK_REQUEST_TIMEOUT: i64 = -32001;
/// The TypeScript SDK's `ConnectionClosed`.
const SDK_CONNECTION_CLOSED: i64 = -32000;

fn phrase_regex(pattern: &str) -> Option<Regex> {
    Regex::new(&format!(r"(?i)(?-u:\b)(?:{pattern})(?-u:\b)")).ok()
}

/// Phrases per kind, in the order they are tried: the first kind whose phrase appears wins.
/// Rate limits come first because providers wrap them in 403s; schema-validation wording comes
/// before permissions because validators say "additional properties are not allowed".
static PHRASES: LazyLock<Vec<(ErrorKind, Option<Regex>)>> = LazyLock::new(|| {
    vec![
        (
            ErrorKind::RateLimited,
            phrase_regex(
                r"rate[-_ ]?limit(?:s|ed|ing)?|too many requests|quota exceeded|exceeded (?:your |the )?quota|throttl(?:ed|ing)|slow down",
            ),
        ),
        (
            ErrorKind::InvalidArguments,
            phrase_regex(
                r"invalid (?:argument|param(?:eter)?|input)s?|validation (?:error|failed)|failed validation|additional properties|is a required property|missing required (?:argument|param(?:eter)?|field|property)|extra (?:fields|inputs) (?:are )?not permitted|expected [^\n]{1,80}?,? (?:but )?(?:received|got)|invalid type: [^\n]{1,120}?, expected|invalid value: [^\n]{1,120}?, expected|missing field",
            ),
        ),
        (
            ErrorKind::PermissionDenied,
            phrase_regex(
                r"permission denied|forbidden|access (?:is )?denied|unauthori[sz]ed|not authori[sz]ed|not allowed|not permitted|eacces|eperm|insufficient (?:permissions?|privileges|scopes?)|bad credentials|authentication (?:failed|required)|invalid (?:api[ _-]?key|token|credentials)",
            ),
        ),
        (
            ErrorKind::NotFound,
            phrase_regex(
                r"not found|no such|does not exist|doesn't exist|do not exist|could not find|couldn't find|cannot find|can't find|enoent",
            ),
        ),
        (
            ErrorKind::Timeout,
            phrase_regex(
                r"timed out|time[- ]?out|deadline exceeded|etimedout|esockettimedout|took too long",
            ),
        ),
        (
            ErrorKind::UpstreamUnavailable,
            phrase_regex(
                r"connection refused|econnrefused|econnreset|connection reset|service unavailable|temporarily unavailable|bad gateway|ehostunreach|enotfound|getaddrinfo|overloaded|upstream connect error",
            ),
        ),
    ]
});

/// An HTTP status next to words that make it one. The number must stand alone (`\b` on both
/// sides, no decimal part), which keeps out years, ports and ids.
static HTTP_STATUS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:(?:https?(?:/[0-9](?:\.[0-9])?)?|status(?:[ _]?code)?|response code|error code|error)[ \t]*[:=#]?[ \t]*\(?[ \t]*(?P<after_word>[1-5][0-9][0-9])|(?P<before_reason>[1-5][0-9][0-9])[ \t]+(?:not found|unauthori[sz]ed|forbidden|too many requests|service unavailable|bad gateway|gateway time-?out|request time-?out|internal server error|bad request|unprocessable (?:entity|content)|conflict|payment required|method not allowed))(?-u:\b)",
    )
    .ok()
});

/// `retry after 30 seconds`, `Retry-After: 12`, `try again in 1.5s`, `"retry_after_ms": 250`.
static RETRY_AFTER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?-u:\b)(?:retry[-_ ]?after(?P<ms_suffix>[-_]?ms)?|try again in|retry in|try again after|wait(?: for)?|resets? in|available again in)["']?[ \t]*[:=]?[ \t]*(?P<amount>[0-9]{1,12}(?:\.[0-9]+)?)[ \t]*(?P<unit>milliseconds?|ms|minutes?|mins?|m|seconds?|secs?|s|hours?|hrs?|h)?(?-u:\b)"#,
    )
    .ok()
});

/// A bare `in 250ms` counts only once the failure is known to be a rate limit, and only with a
/// unit: alone it is too common a phrase.
static IN_DURATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)in[ \t]+(?P<amount>[0-9]{1,12}(?:\.[0-9]+)?)[ \t]*(?P<unit>milliseconds?|ms|minutes?|mins?|seconds?|secs?|s)(?-u:\b)",
    )
    .ok()
});

/// Classifies a failure. `code` is the JSON-RPC error code when the server answered with a
/// protocol error, `None` for an `isError` result.
pub fn classify(code: Option<i64>, text: &str) -> Classification {
    let http_status = http_status(text);
    let kind = kind_from_phrases(text)
        .or_else(|| http_status.and_then(kind_from_status))
        .or_else(|| code.and_then(kind_from_code))
        .unwrap_or(ErrorKind::UpstreamError);
    let retry_after_ms = retry_after_ms(text).or_else(|| {
        (kind == ErrorKind::RateLimited)
            .then(|| first_duration(IN_DURATION.as_ref(), text, false))
            .flatten()
    });
    Classification {
        kind,
        retry_after_ms,
        http_status,
    }
}

fn kind_from_phrases(text: &str) -> Option<ErrorKind> {
    PHRASES.iter().find_map(|(kind, regex)| {
        regex
            .as_ref()
            .is_some_and(|regex| regex.is_match(text))
            .then_some(*kind)
    })
}

fn kind_from_status(status: u16) -> Option<ErrorKind> {
    match status {
        404 | 410 => Some(ErrorKind::NotFound),
        401 | 403 => Some(ErrorKind::PermissionDenied),
        429 => Some(ErrorKind::RateLimited),
        408 | 504 => Some(ErrorKind::Timeout),
        502 | 503 => Some(ErrorKind::UpstreamUnavailable),
        400 | 422 => Some(ErrorKind::InvalidArguments),
        _ => None,
    }
}

fn kind_from_code(code: i64) -> Option<ErrorKind> {
    match code {
        INVALID_PARAMS => Some(ErrorKind::InvalidArguments),
        SDK_REQUEST_TIMEOUT => Some(ErrorKind::Timeout),
        SDK_CONNECTION_CLOSED => Some(ErrorKind::UpstreamUnavailable),
        _ => None,
    }
}

/// The HTTP status the text reports, when words around a number make it one.
pub fn http_status(text: &str) -> Option<u16> {
    let captures = HTTP_STATUS.as_ref()?.captures(text)?;
    let number = captures
        .name("after_word")
        .or_else(|| captures.name("before_reason"))?;
    // "HTTP 404.5" or "status 200.0" is a measurement, not a status.
    let rest = text.get(number.end()..).unwrap_or_default();
    if rest.starts_with('.') && rest.chars().nth(1).is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    number.as_str().parse().ok()
}

/// How long the text asks to wait, in milliseconds. A number without a unit is in seconds,
/// as in the `Retry-After` header, unless the key itself says milliseconds.
pub fn retry_after_ms(text: &str) -> Option<u64> {
    first_duration(RETRY_AFTER.as_ref(), text, true)
}

fn first_duration(regex: Option<&Regex>, text: &str, allow_ms_suffix: bool) -> Option<u64> {
    regex?.captures_iter(text).find_map(|captures| {
        let amount: f64 = captures.name("amount")?.as_str().parse().ok()?;
        let default_ms = allow_ms_suffix && captures.name("ms_suffix").is_some();
        let unit = captures
            .name("unit")
            .map(|unit| unit.as_str().to_ascii_lowercase());
        let factor = match unit.as_deref() {
            Some("ms" | "millisecond" | "milliseconds") => 1.0,
            Some("m" | "min" | "mins" | "minute" | "minutes") => 60_000.0,
            Some("h" | "hr" | "hrs" | "hour" | "hours") => 3_600_000.0,
            Some(_) => 1_000.0,
            None if default_ms => 1.0,
            None => 1_000.0,
        };
        // `as` saturates on overflow, which is the right answer for absurd waits.
        Some((amount * factor).round() as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> ErrorKind {
        classify(None, text).kind
    }

    #[test]
    fn not_found_phrases() {
        for text in [
            "User not found",
            "ENOENT: no such file or directory, open '/x'",
            "Repository does not exist",
            "HTTP 404 while fetching the page",
            "Could not find the issue",
        ] {
            assert_eq!(kind(text), ErrorKind::NotFound, "{text}");
        }
    }

    #[test]
    fn permission_phrases() {
        for text in [
            "Permission denied",
            "403 Forbidden",
            "Access denied for this resource",
            "request returned 401 Unauthorized",
            "EACCES: permission denied, open '/etc/shadow'",
            "You are not allowed to delete this",
            "Bad credentials",
        ] {
            assert_eq!(kind(text), ErrorKind::PermissionDenied, "{text}");
        }
    }

    #[test]
    fn rate_limits_with_their_wait() {
        let cases = [
            ("Rate limit exceeded, retry after 30 seconds", Some(30_000)),
            ("429 Too Many Requests. Retry-After: 12", Some(12_000)),
            ("rate limited: try again in 1.5s", Some(1_500)),
            ("Too many requests, please retry in 250ms", Some(250)),
            (
                "Rate limit reached. Limit resets in 2 minutes",
                Some(120_000),
            ),
            ("rate limit hit, next window in 250ms", Some(250)),
            (
                r#"{"error":"rate_limited","retry_after_ms":400}"#,
                Some(400),
            ),
            ("API rate limit exceeded for user", None),
        ];
        for (text, wait) in cases {
            let classification = classify(None, text);
            assert_eq!(classification.kind, ErrorKind::RateLimited, "{text}");
            assert_eq!(classification.retry_after_ms, wait, "{text}");
        }
    }

    #[test]
    fn a_rate_limit_inside_a_403_is_a_rate_limit() {
        let classification = classify(
            None,
            "HTTP 403: You have exceeded a secondary rate limit. Please wait a few minutes.",
        );
        assert_eq!(classification.kind, ErrorKind::RateLimited);
        assert_eq!(classification.http_status, Some(403));
        assert_eq!(classification.retry_after_ms, None);
    }

    #[test]
    fn timeouts_and_unavailability() {
        assert_eq!(kind("Request timed out after 30s"), ErrorKind::Timeout);
        assert_eq!(kind("context deadline exceeded"), ErrorKind::Timeout);
        assert_eq!(kind("upstream status code 504"), ErrorKind::Timeout);
        assert_eq!(
            kind("connect ECONNREFUSED 127.0.0.1:5432"),
            ErrorKind::UpstreamUnavailable
        );
        assert_eq!(
            kind("The backend answered HTTP/1.1 503"),
            ErrorKind::UpstreamUnavailable
        );
        assert_eq!(kind("502 Bad Gateway"), ErrorKind::UpstreamUnavailable);
    }

    #[test]
    fn serde_style_messages_are_invalid_arguments() {
        for text in [
            "invalid type: string \"abc\", expected f64",
            "invalid value: integer `-1`, expected u32",
            "missing field `path`",
        ] {
            assert_eq!(
                classify(Some(-32603), text).kind,
                ErrorKind::InvalidArguments,
                "{text}"
            );
        }
    }

    #[test]
    fn invalid_arguments_from_code_and_text() {
        assert_eq!(
            classify(Some(-32602), "something odd").kind,
            ErrorKind::InvalidArguments
        );
        for text in [
            "Invalid arguments for tool add",
            "1 validation error for AddInput",
            "Expected number, received string",
            "Additional properties are not allowed ('x' was unexpected)",
            "Extra inputs are not permitted",
        ] {
            assert_eq!(kind(text), ErrorKind::InvalidArguments, "{text}");
        }
    }

    #[test]
    fn internal_errors_without_detail_are_upstream_errors() {
        assert_eq!(
            classify(Some(-32603), "Something broke").kind,
            ErrorKind::UpstreamError
        );
        assert_eq!(classify(Some(-32603), "").kind, ErrorKind::UpstreamError);
        assert_eq!(
            classify(Some(-32001), "").kind,
            ErrorKind::Timeout,
            "the TypeScript SDK's request timeout"
        );
    }

    #[test]
    fn http_status_needs_context_words() {
        let cases = [
            ("HTTP 404", Some(404)),
            ("status code 503", Some(503)),
            ("request returned 401 Unauthorized", Some(401)),
            ("failed (status: 429)", Some(429)),
            ("HTTP/1.1 502 Bad Gateway", Some(502)),
            ("http error 500", Some(500)),
            ("Found 404 results", None),
            ("listening on 127.0.0.1:8404", None),
            ("in 2024 the status changed", None),
            ("user 500 has 404 items", None),
            ("status 2024", None),
            ("HTTP 404.5 ms", None),
        ];
        for (text, status) in cases {
            assert_eq!(http_status(text), status, "{text}");
        }
    }

    #[test]
    fn neutral_sentences_stay_upstream_errors() {
        for text in [
            "Found 404 results",
            "No errors found in 2024",
            "Model output was empty",
            "Processed 429 records before the crash",
            "Could not parse the response",
            "The cache key was stale",
        ] {
            assert_eq!(kind(text), ErrorKind::UpstreamError, "{text}");
        }
    }

    #[test]
    fn every_pattern_compiles() {
        assert!(PHRASES.iter().all(|(_, regex)| regex.is_some()));
        assert!(HTTP_STATUS.is_some() && RETRY_AFTER.is_some() && IN_DURATION.is_some());
    }

    #[test]
    fn matching_ignores_case() {
        assert_eq!(kind("USER NOT FOUND"), ErrorKind::NotFound);
        assert_eq!(kind("rAtE LiMiT"), ErrorKind::RateLimited);
    }
}
