//! `shop --store sqlite:PATH|postgres://... [--schema NAME] [--listen ADDR] [--lease-ms N]
//! [--pause-at STEP [--hold-ms N]] [--log LEVEL]`: serves the shop and prints `listening on
//! ADDR`; what the layer decides goes to stderr, at INFO unless `--log` says otherwise.

use std::time::Duration;

use retrykey_replicas::{Lease, StoreOptions};
use shop::{Pause, Shop, Step};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1);
    let (mut store, mut schema, mut listen) = (None, None, "127.0.0.1:0".to_owned());
    let (mut options, mut pause) = (StoreOptions::default(), Pause::default());
    let mut log = tracing::Level::INFO;
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--store" => store = Some(value()?),
            "--schema" => schema = Some(value()?),
            "--listen" => listen = value()?,
            "--lease-ms" => {
                let duration = Duration::from_millis(value()?.parse()?);
                options.lease = Lease {
                    duration,
                    ..Lease::default()
                };
            }
            "--pause-at" => {
                let step = value()?;
                pause.at = Some(Step::parse(&step).ok_or(format!("no step {step:?}"))?);
            }
            "--log" => log = value()?.parse()?,
            "--hold-ms" => pause.hold = Some(Duration::from_millis(value()?.parse()?)),
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    tracing_subscriber::fmt()
        .with_max_level(log)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .init();
    let store = store.ok_or("--store is required: sqlite:PATH or a postgres:// URL")?;
    let shop = Shop::open(&store, schema.as_deref(), options, pause).await?;
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("listening on {}", listener.local_addr()?);
    axum::serve(listener, shop.router())
        .with_graceful_shutdown(async {
            tokio::signal::ctrl_c().await.ok();
        })
        .await?;
    Ok(())
}
