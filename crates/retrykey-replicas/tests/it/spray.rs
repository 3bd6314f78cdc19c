//! The `spray` client against three real replicas on one SQLite file: what it prints is the
//! same on every run, except which copy happened to run first.

use std::process::Command;

use crate::support::{DbFile, Replica};

fn spray(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_spray"))
        .args(args)
        .output()
        .expect("the spray binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn urls(replicas: &[Replica]) -> String {
    replicas
        .iter()
        .map(|replica| replica.url.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn three(file: &DbFile) -> Vec<Replica> {
    let store = file.store();
    (0..3)
        .map(|_| Replica::start(&["--store", &store, "--work-ms", "100"]))
        .collect()
}

// Nine copies of one key: one line per copy in copy order, one first answer, one charge.
#[test]
fn nine_copies_print_one_line_each_and_charge_once() {
    let file = DbFile::new("spray-copies");
    let replicas = three(&file);
    let (code, stdout, stderr) = spray(&["--replicas", &urls(&replicas), "--copies", "9"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 12, "{stdout}");
    assert_eq!(
        lines[0],
        r#"9 copies of key "spray" over 3 replicas (A, B, C)"#
    );
    let mut first = 0;
    for (copy, line) in lines[1..10].iter().enumerate() {
        let expected = format!(
            r#"copy {:>2} -> {}: 201 {{"payment":1}} "#,
            copy + 1,
            ["A", "B", "C"][copy % 3]
        );
        let marker = line
            .strip_prefix(&expected)
            .unwrap_or_else(|| panic!("{line:?} does not start with {expected:?}"));
        match marker {
            "first answer" => first += 1,
            "replayed" => {}
            other => panic!("unexpected marker {other:?}"),
        }
    }
    assert_eq!(first, 1, "{stdout}");
    assert_eq!(
        &lines[10..],
        [
            r#"answers 201 {"payment":1}: 9 (1 first, 8 replayed)"#,
            "charges: A 1, B 1, C 1",
        ]
    );
}

// Distinct keys: a summary per status and the charges, the same text on every run.
#[test]
fn distinct_keys_print_a_summary() {
    let file = DbFile::new("spray-keys");
    let replicas = three(&file);
    let (code, stdout, stderr) = spray(&["--replicas", &urls(&replicas), "--keys", "12"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    assert_eq!(
        stdout,
        "12 keys over 3 replicas (A, B, C)\n\
         answers 201: 12 (12 first, 0 replayed)\n\
         charges: A 12, B 12, C 12\n"
    );
}

// A replica address that is not http://HOST:PORT is refused in one line, with status 2.
#[test]
fn a_bad_replica_address_is_refused_in_one_line() {
    let (code, stdout, stderr) = spray(&["--replicas", "127.0.0.1:1"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            Some(2),
            "",
            "spray: --replicas: expected http://HOST:PORT, got \"127.0.0.1:1\"\n"
        )
    );
}

// A key the header cannot carry is refused in one line, with status 2, before any replica is
// contacted: nothing connected to the listener named as the replica.
#[test]
fn an_unsendable_key_is_refused_before_any_request() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (code, stdout, stderr) = spray(&["--replicas", &url, "--key", "op\u{e9}"]);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
    assert!(
        stderr.starts_with("spray: --key: character 2 of the key is not printable ASCII"),
        "{stderr}"
    );
    listener.set_nonblocking(true).unwrap();
    let waiting = listener.accept().map(|_| ());
    assert_eq!(
        waiting.map_err(|error| error.kind()),
        Err(std::io::ErrorKind::WouldBlock),
        "spray connected to a replica with a key it refused"
    );
}
