//! The outbox's programs as an operator runs them: a bad flag or value is one line on stderr
//! and exit status 2, with no database created; a refusal is one line and status 1, with
//! nothing changed; the answers a person reads, and the JSON a script reads.

use std::path::PathBuf;
use std::process::{Command, Output};

use retrykey_outbox_checks::faults::converter_binary;
use retrykey_testkit::ScratchFile;
use retrykey_testkit::program::{assert_refused, db_flag, stdout};

fn run(program: &str, args: &[&str]) -> Output {
    let path: PathBuf = match program {
        "documents" => env!("CARGO_BIN_EXE_documents").into(),
        "dispatcher" => env!("CARGO_BIN_EXE_dispatcher").into(),
        "converter" => converter_binary(),
        other => panic!("no program {other}"),
    };
    Command::new(path)
        .args(args)
        .env_remove("RETRYKEY_PG_URL")
        .output()
        .expect("the program runs")
}

// A bad value for any program is one line and status 2, and creates no database.
#[test]
fn bad_values_are_one_line_and_create_nothing() {
    let file = ScratchFile::new("programs-bad-values");
    let db = db_flag(&file);
    let consumer = "http://127.0.0.1:8090";
    #[rustfmt::skip]
    let cases: Vec<(&str, Vec<&str>, &str)> = vec![
        ("documents", vec!["accept", "--key", "k", "--job", "r", "--units", "3"], "--db is required"),
        ("documents", vec!["--db", "memory", "events"], "expected sqlite:PATH or postgres"),
        ("documents", vec!["--db", "postgres", "events"], "RETRYKEY_PG_URL"),
        ("documents", vec!["--db", &db, "accept", "--key", "", "--job", "r", "--units", "3"], "--key"),
        ("documents", vec!["--db", &db, "accept", "--key", "k", "--job", "", "--units", "3"], "job name is empty"),
        ("documents", vec!["--db", &db, "accept", "--key", "k", "--job", "r", "--units", "-3"], "not negative"),
        ("documents", vec!["--db", &db, "accept", "--key", "k", "--job", "r", "--units", "three"], "positive whole number"),
        ("documents", vec!["--db", &db, "--pg-schema", "Bad-Name", "events"], "schema name"),
        ("dispatcher", vec!["--db", &db, "--consumer", "127.0.0.1:8090"], "http:// URL"),
        ("dispatcher", vec!["--db", &db, "--consumer", consumer, "--lease", "5s"], "must be longer than a delivery's budget"),
        ("dispatcher", vec!["--db", &db, "--consumer", consumer, "--concurrency", "0"], "--concurrency"),
        ("dispatcher", vec!["--db", &db, "--consumer", consumer, "--poll", "10"], "--poll"),
        ("dispatcher", vec!["--db", &db, "--consumer", consumer, "--pause-at", "later"], "expected sent"),
        ("dispatcher", vec!["--db", &db, "--consumer", consumer, "--marks", "fast"], "expected durable or relaxed"),
        ("converter", vec!["--db", &db, "--listen", "localhost"], "--listen"),
        ("converter", vec!["--db", "sqlite:", "--listen", "127.0.0.1:0"], "sqlite: needs a file path"),
        ("converter", vec!["--db", &db, "--pause-at", "before"], "expected converted"),
    ];
    for (program, args, says) in cases {
        let output = run(program, &args);
        assert_refused(&output, 2, program, says);
        assert!(
            !file.path().exists(),
            "{program} {args:?} created the database"
        );
    }
}

// A job accepted, the same key again (a replay, nothing written), the key with another job
// (refused, status 1); the events listed. (The operator's view and actions on them are
// `retrykey-reconcile`'s program test.)
#[test]
fn a_job_from_accept_to_its_event() {
    let file = ScratchFile::new("programs-accept");
    let db = db_flag(&file);
    let accept = |job: &str| {
        run(
            "documents",
            &[
                "--db", &db, "accept", "--key", "job-1", "--job", job, "--units", "7",
            ],
        )
    };
    let first = accept("report.docx");
    assert!(first.status.success(), "{first:?}");
    let first = stdout(&first);
    assert!(
        first.starts_with("accepted: job 1 (report.docx, 7 units) under key job-1, event "),
        "{first}"
    );
    let event = first.trim().rsplit(' ').next().unwrap().to_owned();
    let again = stdout(&accept("report.docx"));
    assert!(
        again.starts_with("replayed (the key's first answer; nothing written): job 1"),
        "{again}"
    );
    assert!(again.trim().ends_with(&event), "the same event: {again}");
    assert_refused(&accept("other.docx"), 1, "documents", "conflict");

    let events = stdout(&run("documents", &["--db", &db, "events"]));
    assert!(
        events.contains(&format!(
            "job 1 (report.docx, 7 units): event {event} pending, deliveries 0"
        )),
        "{events}"
    );
    assert!(events.ends_with("\n1 event\n"), "{events}");
}

// A reader that goes away early (`documents events | head`) ends the output, not the program:
// no panic, no error line, status 0.
#[test]
fn a_closed_pipe_ends_the_listing_quietly() {
    let file = ScratchFile::new("programs-closed-pipe");
    let documents = retrykey_outbox::SqliteOutbox::open(
        file.path(),
        retrykey_outbox::DocumentsOptions::default(),
    )
    .expect("opens");
    // Enough lines to overflow a pipe's buffer, so that the write meets the closed end.
    for n in 0..1_000 {
        let key = retrykey::Key::new(format!("job-{n}")).unwrap();
        let job = retrykey::Request::new("report.docx", 1).unwrap();
        documents.accept(&key, &job).expect("accepted");
    }
    drop(documents);
    let mut child = Command::new(env!("CARGO_BIN_EXE_documents"))
        .args(["--db", &db_flag(&file), "events"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("ends");
    assert_eq!(
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).as_ref()
        ),
        (Some(0), "")
    );
}
