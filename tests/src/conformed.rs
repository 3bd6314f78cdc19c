//! The HTTP variants under the conformance kit: each served behind the payments handler on
//! 127.0.0.1, as the correct layer is, and held to the kit checks its manifest declares
//! (`conform`). The kit sees only the wire, so this is what a variant's bug looks like to
//! someone checking a server they did not write.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use retrykey_conform::{
    CHECKS, CheckReport, CheckVerdict, KitReport, MAX_WITNESS, PAYMENTS_PROFILE, Profile,
};
use retrykey_http::payments::{Payments, is_payment};
use retrykey_http::{
    Builder, Entries, EntriesFuture, EntryId, Fingerprint, IdempotencyLayer, Lookup, MemoryEntries,
    Reserve, StoreLimits, StoredResponse, Token,
};
use retrykey_server::loopback::Server;
use tower_layer::Layer;

/// The stage whose variants the kit serves: the HTTP layer's.
pub const STAGE: u32 = 4;

/// The variants the kit runs against, by name: every stage 4 (HTTP) variant.
pub const VARIANTS: [&str; 10] = [
    "body-only-replay",
    "cancel-unsafe",
    "cookie-not-kept",
    "evict-when-full",
    "no-fingerprint",
    "panic-jams-the-key",
    "replay-5xx",
    "split-check-insert",
    "unscoped-key",
    "url-only-fingerprint",
];

/// The most keys the served store holds: fewer than the profile's burst, so that a store
/// that evicts to make room is caught at it.
pub const MAX_ENTRIES: usize = 16;

/// How long each lookup takes: duplicates sent together all look before any reserves.
pub const LOOKUP_DELAY: Duration = Duration::from_millis(30);

/// A variant the kit does not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the kit runs no variant named {0:?}; it runs: {list}", list = VARIANTS.join(", "))]
pub struct UnknownVariant(pub String);

/// How long the served store keeps a finished key: short, so that a burst's smaller runs, which
/// wait it out, stay quick.
pub const RETENTION: Duration = Duration::from_secs(2);

/// How much past [`RETENTION`] the profile lets the served store keep a key.
pub const GRACE: Duration = Duration::from_millis(500);

/// The longest a duplicate waits for the first attempt: a retry stuck behind a vanished
/// attempt gets its 503 well within the kit's limit.
pub const WAIT: Duration = Duration::from_secs(2);

/// The lab's profile, with a burst larger than the served store and the store's expiry.
pub fn profile() -> Profile {
    let mut profile = Profile::parse(PAYMENTS_PROFILE).expect("the lab's profile is valid");
    if let Some(burst) = profile.burst.as_mut() {
        burst.keys = MAX_ENTRIES + MAX_ENTRIES / 2;
    }
    if let Some(expiry) = profile.expiry.as_mut() {
        expiry.after_ms = RETENTION.as_millis() as u64;
        expiry.grace_ms = GRACE.as_millis() as u64;
    }
    profile
}

/// The layer of `variant` (`None`: the correct one), in front of a store of [`MAX_ENTRIES`]
/// whose lookups take [`LOOKUP_DELAY`], with duplicates waiting at most [`WAIT`].
fn layer(variant: Option<&str>) -> Result<IdempotencyLayer, UnknownVariant> {
    let limits = StoreLimits {
        max_entries: MAX_ENTRIES,
        retention: RETENTION,
        ..StoreLimits::default()
    };
    let store: Arc<dyn Entries> = match variant {
        Some("split-check-insert") => Arc::new(split_check_insert::SplitCheckInsert::new(limits)),
        Some("evict-when-full") => Arc::new(evict_when_full::EvictWhenFull::new(limits)),
        _ => Arc::new(MemoryEntries::new(limits)),
    };
    let builder = IdempotencyLayer::builder()
        .shared_store(Arc::new(SlowLookup(store)))
        .in_flight(retrykey_http::InFlight::Wait(WAIT))
        .require_key(is_payment);
    Ok(engine(variant, builder)?.build())
}

fn engine(variant: Option<&str>, builder: Builder) -> Result<Builder, UnknownVariant> {
    Ok(match variant {
        None | Some("split-check-insert" | "evict-when-full") => builder,
        Some("body-only-replay") => builder.engine(body_only_replay::BodyOnlyReplay),
        Some("cancel-unsafe") => builder.engine(cancel_unsafe::CancelUnsafe),
        Some("cookie-not-kept") => builder.engine(cookie_not_kept::CookieNotKept),
        Some("panic-jams-the-key") => builder.engine(panic_jams_the_key::PanicJamsTheKey),
        Some("no-fingerprint") => builder.engine(no_fingerprint::NoFingerprint),
        Some("replay-5xx") => builder.engine(replay_5xx::Replay5xx),
        Some("unscoped-key") => builder.engine(unscoped_key::UnscopedKey),
        Some("url-only-fingerprint") => builder.engine(url_only_fingerprint::UrlOnlyFingerprint),
        Some(other) => return Err(UnknownVariant(other.to_owned())),
    })
}

/// The payments handler behind `variant`'s layer (`None`: the correct one), on 127.0.0.1.
pub async fn serve(variant: Option<&str>) -> Result<Server, UnknownVariant> {
    let payments = Payments::new(Duration::from_millis(20));
    let service = layer(variant)?.layer(payments.service());
    Ok(Server::start(service).await.expect("a server on 127.0.0.1"))
}

/// Every kit check against `variant` (`None`: the correct layer), each on a server of its own,
/// so that no check meets another's keys; a check that stands on one that failed is not judged,
/// as in one run of the kit.
pub async fn kit_on(variant: Option<&str>) -> Result<KitReport, UnknownVariant> {
    let profile = profile();
    let mut checks: Vec<CheckReport> = Vec::new();
    for check in CHECKS {
        if let Some(why) = retrykey_conform::refuted(check, &checks) {
            checks.push(CheckReport::not_judged(check, &why));
            continue;
        }
        let server = serve(variant).await?;
        let base = server.url().parse().expect("a loopback URL");
        let only = [check.name.to_owned()];
        let report = retrykey_conform::run(&profile, &base, &only)
            .await
            .expect("a known check");
        checks.extend(report.checks);
        server.stop().await;
    }
    Ok(KitReport {
        base: "a server per check".to_owned(),
        checks,
    })
}

/// The kit's findings against `name`, held to `declared`: exactly those checks fail, none is
/// skipped, and every witness has at most [`MAX_WITNESS`] exchanges. `Ok` gives the row's words.
pub fn caught_as_declared(name: &str, declared: &BTreeSet<String>) -> Result<String, String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|error| error.to_string())?;
    let report = runtime
        .block_on(kit_on(Some(name)))
        .map_err(|error| error.to_string())?;
    let failed: BTreeSet<String> = report
        .failed()
        .iter()
        .map(|name| name.to_string())
        .collect();
    let mut problems = Vec::new();
    for missed in declared.difference(&failed) {
        problems.push(format!(
            "the kit's {missed} passed, though declared to fail"
        ));
    }
    for extra in failed.difference(declared) {
        problems.push(format!("the kit's {extra} failed, though not declared"));
    }
    // A row may be not judged only for a declared failure it stands on.
    let unexplained: Vec<&str> = (report.checks.iter())
        .filter(|check| match &check.verdict {
            CheckVerdict::Skipped { reason } => !declared
                .iter()
                .any(|name| reason.ends_with(&format!(", see {name}"))),
            _ => false,
        })
        .map(|check| check.name)
        .collect();
    if !unexplained.is_empty() {
        problems.push(format!("the kit skipped {}", unexplained.join(", ")));
    }
    let mut longest = 0;
    for check in &report.checks {
        if let CheckVerdict::Failed(failure) = &check.verdict {
            longest = longest.max(failure.named);
            if failure.witness.is_empty() || failure.named > MAX_WITNESS {
                problems.push(format!(
                    "the kit's {} names {} exchanges as its witness, not 1 to {MAX_WITNESS}",
                    check.name, failure.named
                ));
            }
        }
    }
    if !problems.is_empty() {
        return Err(format!("{}\n{}", problems.join("; "), report.text()));
    }
    Ok(format!(
        "conform: fails {}, with witnesses of at most {longest} exchanges",
        report.failed().join(", ")
    ))
}

/// A store whose every lookup takes [`LOOKUP_DELAY`]: requests sent together all look before
/// any reserves, the interleaving a store that checks and inserts apart cannot survive.
struct SlowLookup(Arc<dyn Entries>);

impl Entries for SlowLookup {
    fn lookup<'a>(&'a self, id: &'a EntryId) -> EntriesFuture<'a, Lookup> {
        EntriesFuture::new(async move {
            let lookup = self.0.lookup(id).await;
            tokio::time::sleep(LOOKUP_DELAY).await;
            lookup
        })
    }

    fn reserve<'a>(&'a self, id: &'a EntryId, fp: &'a Fingerprint) -> EntriesFuture<'a, Reserve> {
        self.0.reserve(id, fp)
    }

    fn complete<'a>(
        &'a self,
        id: &'a EntryId,
        token: Token,
        response: StoredResponse,
    ) -> EntriesFuture<'a, ()> {
        self.0.complete(id, token, response)
    }

    fn release<'a>(&'a self, id: &'a EntryId, token: Token) -> EntriesFuture<'a, ()> {
        self.0.release(id, token)
    }
}
