//! `shop --store sqlite:PATH|postgres://... [--schema NAME] [--listen ADDR] [--lease-ms N]
//! [--provider URL] [--pause-at STEP [--hold-ms N]] [--log LEVEL]`: serves the shop and prints
//! `listening on ADDR`; what the layer decides goes to stderr, at INFO unless `--log` says
//! otherwise. `--provider` is where payments are charged (`POST URL`); without it the shop takes
//! no payments.
//!
//! `shop --store ... --provider URL --complete [--idle-ms N] [--limit N]`: one run of the
//! completer instead, for a timer to start: it finishes at most `--limit` (100) payments that
//! have stood still for `--idle-ms` (a minute), prints `completed finished=N unknown=N
//! running=N done=N` and exits.

use std::time::Duration;

use retrykey_replicas::{Lease, StoreOptions};
use shop::{Pause, PaymentProvider, Shop, Step};

type Failed = Box<dyn std::error::Error + Send + Sync>;

/// The flags, read.
struct Flags {
    store: Option<String>,
    schema: Option<String>,
    listen: String,
    options: StoreOptions,
    pause: Pause,
    log: tracing::Level,
    provider: Option<String>,
    /// `--complete`: the completer's idle time and limit.
    complete: Option<(Duration, usize)>,
}

fn flags() -> Result<Flags, Failed> {
    let mut args = std::env::args().skip(1);
    let mut flags = Flags {
        store: None,
        schema: None,
        listen: "127.0.0.1:0".to_owned(),
        options: StoreOptions::default(),
        pause: Pause::default(),
        log: tracing::Level::INFO,
        provider: None,
        complete: None,
    };
    let (mut complete, mut idle, mut limit) = (false, Duration::from_secs(60), 100);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--store" => flags.store = Some(value()?),
            "--schema" => flags.schema = Some(value()?),
            "--listen" => flags.listen = value()?,
            "--lease-ms" => {
                let duration = Duration::from_millis(value()?.parse()?);
                flags.options.lease = Lease {
                    duration,
                    ..Lease::default()
                };
            }
            "--pause-at" => {
                let step = value()?;
                flags.pause.at = Some(Step::parse(&step).ok_or(format!("no step {step:?}"))?);
            }
            "--log" => flags.log = value()?.parse()?,
            "--hold-ms" => flags.pause.hold = Some(Duration::from_millis(value()?.parse()?)),
            "--provider" => flags.provider = Some(value()?),
            "--complete" => complete = true,
            "--idle-ms" => idle = Duration::from_millis(value()?.parse()?),
            "--limit" => limit = value()?.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    flags.complete = complete.then_some((idle, limit));
    Ok(flags)
}

#[tokio::main]
async fn main() -> Result<(), Failed> {
    let flags = flags()?;
    tracing_subscriber::fmt()
        .with_max_level(flags.log)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .init();
    let store = (flags.store).ok_or("--store is required: sqlite:PATH or a postgres:// URL")?;
    let mut shop = Shop::open(&store, flags.schema.as_deref(), flags.options, flags.pause).await?;
    if let Some(url) = flags.provider {
        shop = shop.with_provider(PaymentProvider::at(url)?);
    }
    if let Some((idle, limit)) = flags.complete {
        let done = shop.complete(idle, limit).await?;
        println!(
            "completed finished={} unknown={} running={} done={}",
            done.finished, done.unknown, done.running, done.done
        );
        return Ok(());
    }
    let listener = tokio::net::TcpListener::bind(&flags.listen).await?;
    println!("listening on {}", listener.local_addr()?);
    axum::serve(listener, shop.router())
        .with_graceful_shutdown(async {
            tokio::signal::ctrl_c().await.ok();
        })
        .await?;
    Ok(())
}
