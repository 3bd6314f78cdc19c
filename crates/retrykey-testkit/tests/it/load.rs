//! The charge count as the runs read it, from a stand-in server with a canned answer.

use std::io::{Read, Write};
use std::net::TcpListener;

use retrykey_testkit::load::charges;

/// A server that answers one request with `reply`, and its URL.
fn answering(reply: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            let mut request = [0_u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    url
}

fn count(reply: &'static str) -> anyhow::Result<u64> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(charges(&answering(reply)))
}

#[test]
fn the_count_is_read_from_a_200_only() {
    let ok = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{\"charges\":12,\"attempts\":15}\n";
    assert_eq!(count(ok).expect("a count"), 12);
    let busy = "HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n\r\n{\"charges\":3}";
    assert!(count(busy).is_err());
    assert!(count("HTTP/1.1 200 OK\r\n\r\n{}").is_err());
}
