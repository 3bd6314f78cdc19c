//! The checks: one function per promise, each stated as its name says, in the order they run.
//!
//! A check takes a [`Session`] and a size (the burst, the duplicates or the operations it
//! sends, for a check that has one), sends what it needs, and returns the breach it saw with
//! the exchanges that show it. The shared history rules judge every session as well.

mod assert;

pub(crate) use assert::all;
mod keys;
mod load;
mod runs;
mod same_key;

use std::future::Future;
use std::pin::Pin;

use crate::calibrate::Hook;
use crate::profile::{MAX_EXPIRY_MS, Profile};
use crate::session::{Breach, Session};

/// Where a check's rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A section of `draft-ietf-httpapi-idempotency-key-header-07`.
    Draft(&'static str),
    /// A promise of the lab's layer that the draft leaves open.
    Lab,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Draft(section) => write!(f, "draft {section}"),
            Source::Lab => f.write_str("lab"),
        }
    }
}

/// A check's future.
pub type CheckFuture<'s> = Pin<Box<dyn Future<Output = Result<(), Breach>> + Send + 's>>;

/// One check of the kit.
#[derive(Clone, Copy)]
pub struct KitCheck {
    /// Its name, as a variant's manifest declares it.
    pub name: &'static str,
    /// Where its rule comes from.
    pub source: Source,
    /// Why the profile leaves it out, or `None` when it runs.
    pub skipped: fn(&Profile) -> Option<String>,
    /// The size it runs at first, for a check the kit may shrink (`None`: it has no size).
    pub size: fn(&Profile) -> Option<usize>,
    /// Whether a smaller run waits out the profile's expiry first: a check that fills the
    /// server must not meet its own earlier run's records.
    pub settles: bool,
    /// The profile's hooks it relies on, each proved on the server before it runs.
    pub hooks: &'static [Hook],
    /// The checks whose promise it stands on (a first request runs, a retry replays): when one
    /// of them failed, this one is not judged, and points there instead of failing for the
    /// same cause.
    pub after: &'static [&'static str],
    /// The check.
    pub run: for<'s> fn(&'s Session<'s>, usize) -> CheckFuture<'s>,
}

impl std::fmt::Debug for KitCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KitCheck")
            .field("name", &self.name)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

const FIRST: &str = "first-request-succeeds";
const RETRY: &str = "retry-replays-the-first-answer";
const EXPIRES: &str = "key-expires-when-declared";
const SERVER_ERROR: &str = "server-error-releases-or-replays";

fn runs(_: &Profile) -> Option<String> {
    None
}

fn no_size(_: &Profile) -> Option<usize> {
    None
}

fn lacking(what: &str) -> String {
    format!("the profile declares no {what}")
}

fn needs_changed_path(profile: &Profile) -> Option<String> {
    profile
        .request
        .changed_path
        .is_none()
        .then(|| lacking("changed_path"))
}

fn needs_slow_request(profile: &Profile) -> Option<String> {
    profile
        .in_flight
        .is_none()
        .then(|| lacking("[in_flight] slow request"))
}

fn needs_required_key(profile: &Profile) -> Option<String> {
    (!profile.key.required)
        .then(|| "the profile declares the key optional on this route".to_owned())
}

fn needs_draft_syntax(profile: &Profile) -> Option<String> {
    profile
        .key
        .opaque
        .then(|| "the profile declares keys opaque: any header value is a key".to_owned())
}

fn needs_max_length(profile: &Profile) -> Option<String> {
    if profile.key.format == crate::profile::KeyFormat::Uuid {
        return Some("the profile's keys are UUIDs, all of one length".to_owned());
    }
    profile
        .key
        .max_length
        .is_none()
        .then(|| lacking("key.max_length"))
}

fn needs_fail_once(profile: &Profile) -> Option<String> {
    profile
        .fail_once
        .is_none()
        .then(|| lacking("[fail_once] header"))
}

fn needs_kept_headers(profile: &Profile) -> Option<String> {
    (profile.replay.kept_headers.is_empty()).then(|| lacking("replay.kept_headers"))
}

fn needs_throws(profile: &Profile) -> Option<String> {
    profile.throws.is_none().then(|| lacking("[throws] header"))
}

fn needs_cookie(profile: &Profile) -> Option<String> {
    profile.cookie.is_none().then(|| lacking("[cookie] header"))
}

fn needs_expiry_and_slow_request(profile: &Profile) -> Option<String> {
    needs_short_expiry(profile).or_else(|| needs_slow_request(profile))
}

fn needs_callers(profile: &Profile) -> Option<String> {
    profile.callers.is_none().then(|| lacking("caller header"))
}

fn needs_short_expiry(profile: &Profile) -> Option<String> {
    match &profile.expiry {
        None => Some(lacking("expiry")),
        Some(expiry) if expiry.after_ms.saturating_add(expiry.grace_ms) > MAX_EXPIRY_MS => {
            Some(format!(
                "the profile's expiry ({} ms, and {} ms of grace) is longer than the kit waits \
                 ({MAX_EXPIRY_MS} ms)",
                expiry.after_ms, expiry.grace_ms
            ))
        }
        Some(_) => None,
    }
}

fn needs_burst(profile: &Profile) -> Option<String> {
    profile.burst.is_none().then(|| lacking("[burst]"))
}

fn needs_effects(profile: &Profile) -> Option<String> {
    profile.effects.is_none().then(|| lacking("effects path"))
}

fn duplicates(profile: &Profile) -> Option<usize> {
    Some(profile.scale.duplicates)
}

fn burst_keys(profile: &Profile) -> Option<usize> {
    profile.burst.as_ref().map(|burst| burst.keys)
}

fn operations(profile: &Profile) -> Option<usize> {
    Some(profile.scale.operations)
}

macro_rules! kit_checks {
    ($( $name:literal => $check:path, $source:expr, $skipped:path, $size:path, $settles:literal, [$($hook:ident),*], [$($after:expr),*]; )*) => {
        /// Every check, in the order the kit runs them.
        pub const CHECKS: &[KitCheck] = &[
            $( KitCheck {
                name: $name,
                source: $source,
                skipped: $skipped,
                size: $size,
                settles: $settles,
                hooks: &[$(Hook::$hook),*],
                after: &[$($after),*],
                run: |session, size| Box::pin($check(session, size)),
            }, )*
        ];
    };
}

// A check's `after` names the checks it stands on; each comes earlier in this list.
kit_checks! {
    "first-request-succeeds" => same_key::first_request_succeeds, Source::Draft("§2.6"), runs, no_size, false, [], [];
    "retry-replays-the-first-answer" => same_key::retry_replays_the_first_answer, Source::Draft("§2.6"), runs, no_size, false, [], [FIRST];
    "replay-keeps-the-stored-headers" => same_key::replay_keeps_the_stored_headers, Source::Lab, needs_kept_headers, no_size, false, [], [RETRY];
    "changed-body-is-422" => same_key::changed_body_is_422, Source::Draft("§2.7"), runs, no_size, false, [], [RETRY];
    "changed-path-is-refused" => same_key::changed_path_is_refused, Source::Lab, needs_changed_path, no_size, false, [], [RETRY];
    "client-header-cannot-decide" => same_key::client_header_cannot_decide, Source::Lab, runs, no_size, false, [], [RETRY];
    "duplicate-waits-or-conflicts" => runs::duplicate_waits_or_conflicts, Source::Draft("§2.7"), needs_slow_request, duplicates, false, [SlowRequest], [RETRY];
    "missing-key-is-refused" => keys::missing_key_is_refused, Source::Draft("§2.7"), needs_required_key, no_size, false, [], [];
    "empty-key-is-no-key" => keys::empty_key_is_no_key, Source::Lab, runs, no_size, false, [], [];
    "malformed-key-is-refused" => keys::malformed_key_is_refused, Source::Lab, needs_draft_syntax, no_size, false, [], [];
    "overlong-key-is-refused" => keys::overlong_key_is_refused, Source::Lab, needs_max_length, no_size, false, [], [FIRST];
    "repeated-key-header-is-refused" => keys::repeated_key_header_is_refused, Source::Lab, needs_draft_syntax, no_size, false, [], [];
    "keyless-callers-never-share-an-answer" => keys::keyless_callers_never_share_an_answer, Source::Lab, needs_callers, no_size, false, [Callers], [];
    "server-error-releases-or-replays" => runs::server_error_releases_or_replays, Source::Lab, needs_fail_once, no_size, false, [FailOnce], [FIRST];
    "throwing-handler-leaves-no-stuck-key" => runs::throwing_handler_leaves_no_stuck_key, Source::Lab, needs_throws, no_size, false, [Throws], [FIRST, SERVER_ERROR];
    "callers-are-kept-apart" => same_key::callers_are_kept_apart, Source::Lab, needs_callers, no_size, false, [Callers], [RETRY];
    "cookie-answer-is-kept" => same_key::cookie_answer_is_kept, Source::Lab, needs_cookie, no_size, false, [SetsCookie], [RETRY];
    "disconnected-first-attempt-completes" => runs::disconnected_first_attempt_completes, Source::Lab, needs_slow_request, no_size, false, [SlowRequest], [RETRY];
    "key-expires-when-declared" => same_key::key_expires_when_declared, Source::Draft("§2.3"), needs_short_expiry, no_size, false, [], [RETRY];
    "expired-key-runs-once-more" => runs::expired_key_runs_once_more, Source::Lab, needs_expiry_and_slow_request, no_size, false, [SlowRequest], [EXPIRES];
    "effects-match-operations" => load::effects_match_operations, Source::Lab, needs_effects, operations, false, [Effects], [RETRY];
    "burst-keeps-live-records" => load::burst_keeps_live_records, Source::Lab, needs_burst, burst_keys, true, [], [RETRY];
}

/// The check named `name`.
pub fn by_name(name: &str) -> Option<&'static KitCheck> {
    CHECKS.iter().find(|check| check.name == name)
}
