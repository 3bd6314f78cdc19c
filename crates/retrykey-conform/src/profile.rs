//! The profile: what the kit must know of the server under test, read from TOML.
//!
//! A server's idempotency promises differ in details the draft leaves open (wait or 409, bare
//! keys or only quoted ones, the replay marker, the expiry), and the kit cannot guess them. The
//! profile states them; a check whose needs the profile does not state is skipped, with why.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;

use serde::Deserialize;

/// The text a body template carries where the kit puts an operation's number.
pub const PLACEHOLDER: &str = "{n}";

/// The longest expiry the kit waits out; a longer one skips the expiry check.
pub const MAX_EXPIRY_MS: u64 = 10_000;

/// The server under test, as a profile describes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The base URL the kit talks to when no `--base` is given.
    pub base: Option<String>,
    /// The keyed route and its requests.
    pub request: RequestShape,
    /// What the server accepts as a key.
    #[serde(default)]
    pub key: KeyRules,
    /// How a replayed answer is marked, and what it must keep.
    #[serde(default)]
    pub replay: Replay,
    /// A duplicate that arrives while the first attempt runs.
    pub in_flight: Option<Duplicates>,
    /// The header that names the caller, and two callers to use.
    pub callers: Option<Callers>,
    /// How to make the handler fail once with a 5xx.
    pub fail_once: Option<FailOnce>,
    /// How to make the handler panic (or throw) once, before any effect.
    pub throws: Option<Throws>,
    /// How to make the handler's answer set a cookie.
    pub cookie: Option<SetsCookie>,
    /// How long a finished key is kept.
    pub expiry: Option<Expiry>,
    /// A burst of distinct keys.
    pub burst: Option<Burst>,
    /// Where the server counts its effects.
    pub effects: Option<Effects>,
    /// What the server's own refusals (400, 409, 422) look like.
    #[serde(default)]
    pub errors: Errors,
    /// How hard and how long the kit tries.
    #[serde(default)]
    pub scale: Scale,
}

/// What the server's own refusals look like.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Errors {
    /// The media type of their bodies (`application/problem+json`); without one, any
    /// non-empty body will do.
    pub media_type: Option<String>,
}

/// The keyed route.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestShape {
    /// `POST` unless stated.
    #[serde(default = "post")]
    pub method: String,
    /// The route's path (with any query), after the base URL's own path.
    pub path: String,
    /// Another path, to reuse a key on: the changed-path check is skipped without one.
    pub changed_path: Option<String>,
    /// What the key reused on `changed_path` gets: 422 where the layer guards that path too;
    /// a server with no route there answers 404, and then nothing may run or be replayed.
    #[serde(default = "unprocessable")]
    pub changed_path_status: u16,
    /// The body's media type, sent as `Content-Type`.
    pub content_type: Option<String>,
    /// The body, with `{n}` where the kit writes a number of its choosing: each operation gets
    /// its own number, and a changed body another.
    pub body: String,
    /// Headers every request carries (an API token, say).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

fn post() -> String {
    "POST".to_owned()
}

fn unprocessable() -> u16 {
    422
}

fn bad_request() -> u16 {
    400
}

/// What the server accepts as a key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRules {
    /// The route refuses a request without a key; otherwise the missing-key check is skipped.
    #[serde(default)]
    pub required: bool,
    /// A bare token (`abc`) is a key as well as the draft's string (`"abc"`).
    #[serde(default)]
    pub bare_tokens: bool,
    /// Any header value is a key, taken whole: the kit sends keys bare, and the checks of the
    /// draft's key syntax (a malformed key, the key on two lines) do not apply.
    #[serde(default)]
    pub opaque: bool,
    /// The longest key accepted, in characters of the key: of the draft's string without its
    /// quotes, or of the whole header value for an opaque key. The overlong-key check is
    /// skipped without one.
    pub max_length: Option<usize>,
    /// The status of a refused key (missing, malformed, too long, on two lines): 400 unless
    /// stated, as the draft answers a missing one.
    #[serde(default = "bad_request")]
    pub refusal_status: u16,
    /// The keys the server takes: any text (the kit's own are `k1-...`), or only UUIDs, as the
    /// draft recommends clients make them.
    #[serde(default)]
    pub format: KeyFormat,
}

/// What the kit's keys look like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyFormat {
    /// Any text: the kit names its keys for the check and the operation they belong to.
    #[default]
    Any,
    /// A UUID (version 4 in form), drawn from the name the kit would give the key.
    Uuid,
}

impl Default for KeyRules {
    fn default() -> Self {
        Self {
            required: false,
            bare_tokens: false,
            opaque: false,
            max_length: None,
            refusal_status: bad_request(),
            format: KeyFormat::Any,
        }
    }
}

/// The replay marker, and what a replay must keep of the first answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// The header that marks a replay (`Idempotent-Replayed`); without one, a replay is known
    /// only by its answer, and the checks that need the mark rely on the effect count.
    pub header: Option<String>,
    /// Its value on a replay (`true`, in any letter case); without one, the header's presence.
    pub value: Option<String>,
    /// Headers of the first answer that a replay must carry unchanged (`Location`, ...).
    #[serde(default)]
    pub kept_headers: Vec<String>,
    /// How a replay's body is compared with the first answer's.
    #[serde(default)]
    pub body: BodyMatch,
}

/// How a replay's body is compared with the first answer's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BodyMatch {
    /// Byte for byte (trailing whitespace aside): the server stores the answer it sent.
    #[default]
    Exact,
    /// As JSON values: the server stores a result and serializes it again for each replay.
    Json,
}

/// What a duplicate of a running request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DuplicatePolicy {
    /// It waits for the first attempt and replays its answer (the lab's default).
    Wait,
    /// It gets 409 at once (the draft's rule).
    Conflict,
}

/// A duplicate that arrives while the first attempt runs, and how to make one run long enough.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Duplicates {
    /// Wait and replay, or 409.
    pub policy: DuplicatePolicy,
    /// A header that makes the handler take `slow_ms` longer (`X-Delay-Ms: 400`).
    pub slow_header: Header,
    /// How long a request with that header runs, at least.
    pub slow_ms: u64,
}

/// One header, by name and value.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: String,
}

/// How the server tells callers apart, and two different callers: by a header and two values
/// of it, or by the address a request comes from and two loopback addresses.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Callers {
    /// The header that names the caller (`Authorization`, say).
    pub header: Option<String>,
    /// Two callers' values of it (`["Bearer alice", "Bearer bob"]`).
    #[serde(default)]
    pub values: Vec<String>,
    /// Without a header: two loopback addresses the kit connects from, one per caller
    /// (`["127.0.0.1", "127.0.0.2"]`).
    #[serde(default)]
    pub addresses: Vec<IpAddr>,
}

impl Callers {
    /// Caller `index` (0 or 1) as a message names it: `Authorization: Bearer bob`, or
    /// `from 127.0.0.2`.
    pub fn describe(&self, index: usize) -> String {
        match (
            &self.header,
            self.values.get(index),
            self.addresses.get(index),
        ) {
            (Some(header), Some(value), _) => format!("{header}: {value}"),
            (_, _, Some(address)) => format!("from {address}"),
            _ => format!("caller {}", index + 1),
        }
    }

    fn problem(&self) -> Option<(&'static str, &'static str)> {
        let two = |n: usize, same: bool| n == 2 && !same;
        match &self.header {
            Some(_) if !self.addresses.is_empty() => Some((
                "callers.addresses",
                "is for callers told apart without a header",
            )),
            Some(_) if !two(self.values.len(), self.values.first() == self.values.get(1)) => {
                Some(("callers.values", "must name two different callers"))
            }
            None if !two(
                self.addresses.len(),
                self.addresses.first() == self.addresses.get(1),
            ) =>
            {
                Some((
                    "callers.addresses",
                    "must name two different addresses, or give a header",
                ))
            }
            None if self.addresses.iter().any(|a| !a.is_loopback()) => {
                Some(("callers.addresses", "must be loopback addresses"))
            }
            _ => None,
        }
    }
}

/// A header whose first request with each distinct value fails with a 5xx before any effect.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailOnce {
    /// The header's name; the kit picks a fresh value per operation.
    pub header: String,
    /// What a retry of that 5xx gets.
    #[serde(default)]
    pub policy: ErrorPolicy,
}

/// A header whose first request with each distinct value makes the handler panic (or throw an
/// exception) before any effect: what the server answers, if anything, is its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Throws {
    /// The header's name; the kit picks a fresh value per operation.
    pub header: String,
}

/// A header whose request gets an answer that sets a cookie (`Set-Cookie`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetsCookie {
    /// The header's name; its value is the kit's.
    pub header: String,
}

/// What becomes of a key whose first attempt ended in a 5xx: the draft leaves it to the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorPolicy {
    /// The key is released: the retry runs (the lab's choice).
    #[default]
    Release,
    /// The 5xx is the key's answer: the retry replays it, and nothing runs.
    Replay,
}

/// How long a finished key's answer is kept.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expiry {
    /// Milliseconds after the answer.
    pub after_ms: u64,
    /// How much later the kit tries the key as new: a store may sweep on its own schedule.
    #[serde(default = "default_grace")]
    pub grace_ms: u64,
}

/// The grace an expiry gets when the profile states none, in milliseconds.
pub const DEFAULT_GRACE_MS: u64 = 1_000;

fn default_grace() -> u64 {
    DEFAULT_GRACE_MS
}

/// A burst of distinct keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    /// How many keys.
    pub keys: usize,
    /// The status a fresh key gets when the server holds as many as it will (`503`); without
    /// one, every key of the burst must be accepted.
    pub refusal_status: Option<u16>,
}

/// Where the server counts its effects.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Effects {
    /// A path answering `GET` with a JSON object.
    pub path: String,
    /// The object's field holding the count.
    pub field: String,
}

/// How hard and how long the kit tries.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scale {
    /// Duplicates sent while a first attempt runs.
    #[serde(default = "four")]
    pub duplicates: usize,
    /// Operations in the effects check, each sent three times.
    #[serde(default = "eight")]
    pub operations: usize,
    /// Requests in flight at once during a burst.
    #[serde(default = "eight")]
    pub parallel: usize,
    /// The longest the kit waits for one answer, in milliseconds.
    #[serde(default = "ten_seconds")]
    pub timeout_ms: u64,
}

impl Default for Scale {
    fn default() -> Self {
        Self {
            duplicates: four(),
            operations: eight(),
            parallel: eight(),
            timeout_ms: ten_seconds(),
        }
    }
}

fn four() -> usize {
    4
}

fn eight() -> usize {
    8
}

fn ten_seconds() -> u64 {
    10_000
}

/// Why a profile was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("cannot read the profile {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// It is not TOML of the profile's shape.
    #[error("the profile is not valid: {0}")]
    Parse(#[from] toml::de::Error),
    /// A value breaks a rule that TOML's types cannot state.
    #[error("the profile's {field} {problem}")]
    Invalid {
        /// The field, as a TOML path.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
}

impl Profile {
    /// Reads and checks a profile file.
    pub fn read(path: &Path) -> Result<Self, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }

    /// Parses and checks a profile's text.
    pub fn parse(text: &str) -> Result<Self, ProfileError> {
        let profile: Profile = toml::from_str(text)?;
        profile.validate()?;
        Ok(profile)
    }

    fn validate(&self) -> Result<(), ProfileError> {
        let invalid = |field, problem: &str| {
            Err(ProfileError::Invalid {
                field,
                problem: problem.to_owned(),
            })
        };
        if !self.request.body.contains(PLACEHOLDER) {
            return invalid("request.body", "has no {n}: the kit could not change it");
        }
        if !self.request.method.bytes().all(|b| b.is_ascii_uppercase()) {
            return invalid("request.method", "is not an upper-case method name");
        }
        for (field, path) in self.paths() {
            if !path.starts_with('/') {
                return invalid(field, "does not start with /");
            }
        }
        if let Some((field, problem)) = self.callers.as_ref().and_then(Callers::problem) {
            return invalid(field, problem);
        }
        if self.burst.as_ref().is_some_and(|burst| burst.keys == 0) {
            return invalid("burst.keys", "is 0");
        }
        if self.key.max_length == Some(0) {
            return invalid("key.max_length", "is 0");
        }
        if self.key.opaque && self.key.bare_tokens {
            return invalid(
                "key.bare_tokens",
                "is the draft's syntax, which an opaque key does not have",
            );
        }
        if !(400..500).contains(&self.key.refusal_status) {
            return invalid("key.refusal_status", "is not a 4xx");
        }
        if !(400..500).contains(&self.request.changed_path_status) {
            return invalid("request.changed_path_status", "is not a 4xx");
        }
        if self.in_flight.as_ref().is_some_and(|d| d.slow_ms == 0) {
            return invalid(
                "in_flight.slow_ms",
                "is 0: no duplicate could arrive while it runs",
            );
        }
        if self.expiry.as_ref().is_some_and(|e| e.after_ms == 0) {
            return invalid("expiry.after_ms", "is 0");
        }
        self.validate_headers()?;
        self.validate_scale()
    }

    /// Every header the profile names can go on the wire as written, and none is one the kit
    /// writes itself.
    fn validate_headers(&self) -> Result<(), ProfileError> {
        const WRITTEN: [&str; 5] = [
            "idempotency-key",
            "content-type",
            "content-length",
            "host",
            "connection",
        ];
        for (field, name, value) in self.headers() {
            let bad_name = name.is_some_and(|n| n.is_empty() || n.contains([' ', ':']));
            if bad_name || value.chars().any(char::is_control) {
                return Err(ProfileError::Invalid {
                    field,
                    problem: format!("{value:?} cannot be written in a header line"),
                });
            }
        }
        match self
            .request
            .headers
            .keys()
            .find(|name| WRITTEN.contains(&name.to_ascii_lowercase().as_str()))
        {
            Some(name) => Err(ProfileError::Invalid {
                field: "request.headers",
                problem: format!("names {name}, which the kit writes itself"),
            }),
            None => Ok(()),
        }
    }

    /// Every header name and value the profile gives: (field, the name if it is one, text).
    fn headers(&self) -> Vec<(&'static str, Option<&str>, &str)> {
        let mut all: Vec<(&'static str, Option<&str>, &str)> = Vec::new();
        for (name, value) in &self.request.headers {
            all.push(("request.headers", Some(name), name));
            all.push(("request.headers", None, value));
        }
        if let Some(callers) = &self.callers {
            if let Some(header) = &callers.header {
                all.push(("callers.header", Some(header), header));
            }
            all.extend(
                callers
                    .values
                    .iter()
                    .map(|v| ("callers.values", None, v.as_str())),
            );
        }
        if let Some(slow) = self.in_flight.as_ref().map(|d| &d.slow_header) {
            all.push(("in_flight.slow_header", Some(&slow.name), &slow.name));
            all.push(("in_flight.slow_header", None, &slow.value));
        }
        if let Some(fail) = &self.fail_once {
            all.push(("fail_once.header", Some(&fail.header), &fail.header));
        }
        if let Some(throws) = &self.throws {
            all.push(("throws.header", Some(&throws.header), &throws.header));
        }
        if let Some(cookie) = &self.cookie {
            all.push(("cookie.header", Some(&cookie.header), &cookie.header));
        }
        if let Some(header) = &self.replay.header {
            all.push(("replay.header", Some(header), header));
        }
        all
    }

    fn validate_scale(&self) -> Result<(), ProfileError> {
        let scale = &self.scale;
        let zero = [
            ("scale.duplicates", scale.duplicates),
            ("scale.operations", scale.operations),
            ("scale.parallel", scale.parallel),
            ("scale.timeout_ms", scale.timeout_ms as usize),
        ];
        match zero.into_iter().find(|(_, value)| *value == 0) {
            Some((field, _)) => Err(ProfileError::Invalid {
                field,
                problem: "is 0".to_owned(),
            }),
            None => Ok(()),
        }
    }

    fn paths(&self) -> Vec<(&'static str, &str)> {
        let mut paths = vec![("request.path", self.request.path.as_str())];
        if let Some(changed) = &self.request.changed_path {
            paths.push(("request.changed_path", changed));
        }
        if let Some(effects) = &self.effects {
            paths.push(("effects.path", &effects.path));
        }
        paths
    }

    /// `body` as a replay's is compared: as it is, or as a canonical JSON text.
    pub fn comparable(&self, body: &str) -> String {
        let json = || serde_json::from_str::<serde_json::Value>(body).ok();
        match self.replay.body {
            BodyMatch::Json => json().map_or_else(|| body.trim_end().to_owned(), |v| v.to_string()),
            BodyMatch::Exact => body.trim_end().to_owned(),
        }
    }

    /// The body of operation number `n`.
    pub fn body(&self, n: u64) -> String {
        self.request.body.replace(PLACEHOLDER, &n.to_string())
    }
}
