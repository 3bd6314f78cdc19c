//! When the outbox's programs stop: at SIGTERM (what a service manager or `kill` sends) or
//! Ctrl-C. The dispatcher then claims nothing more and lets the deliveries in flight finish;
//! the consumer stops accepting and lets open requests finish.

/// Resolves at the first SIGTERM or SIGINT.
pub async fn signalled() {
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let terminated = async {
        match terminate.as_mut() {
            Some(signal) => {
                signal.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminated => {}
    }
}
