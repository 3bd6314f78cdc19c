//! The operator's program as an operator runs it: a bad flag or value is one line on stderr
//! and exit status 2, with no database created; a refusal is one line and status 1, with
//! nothing changed; the answers a person reads, and the JSON a script reads.

use std::process::{Command, Output};

use retrykey::{Key, Request};
use retrykey_outbox::{DocumentsOptions, EventState, SqliteOutbox};
use retrykey_testkit::ScratchFile;
use retrykey_testkit::program::{assert_refused, db_flag, stdout};

fn run(program: &str, args: &[&str]) -> Output {
    assert_eq!(program, "reconcile", "this package's one program");
    Command::new(env!("CARGO_BIN_EXE_reconcile"))
        .args(args)
        .env_remove("RETRYKEY_PG_URL")
        .output()
        .expect("the program runs")
}

// A bad value is one line and status 2, and creates no database.
#[test]
fn bad_values_are_one_line_and_create_nothing() {
    let file = ScratchFile::new("reconcile-bad-values");
    let db = db_flag(&file);
    #[rustfmt::skip]
    let cases: Vec<(&str, Vec<&str>, &str)> = vec![
        ("reconcile", vec!["list"], "--db is required"),
        ("reconcile", vec!["--db", &db, "fail", "some-event", "--reason", " "], "--reason"),
        ("reconcile", vec!["--db", &db, "list", "--after", "1 minute"], "--after"),
        ("reconcile", vec!["--db", &db, "undo", "some-event"], "unrecognized subcommand"),
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

// A job accepted and never delivered: the operator's view lists it, and the actions on it
// answer, refuse and leave the event as the records say.
#[test]
fn an_accepted_job_listed_and_acted_on() {
    let file = ScratchFile::new("reconcile-program");
    let db = db_flag(&file);
    let outbox = SqliteOutbox::open(file.path(), DocumentsOptions::default()).expect("opens");
    let key = Key::new("job-1").unwrap();
    let job = Request::new("report.docx", 7).unwrap();
    let event = outbox
        .accept(&key, &job)
        .expect("accepted")
        .event
        .to_string();
    drop(outbox);

    let list = run(
        "reconcile",
        &["--db", &db, "--json", "list", "--after", "1ms"],
    );
    assert!(list.status.success());
    let report: serde_json::Value = serde_json::from_slice(&list.stdout).expect("JSON");
    assert_eq!(report["undelivered"][0]["event"], event.as_str());
    assert_eq!(report["undelivered"][0]["deliveries"], 0);
    assert_eq!(
        report["converted_not_acknowledged"],
        serde_json::Value::Null
    );

    let unknown = run("reconcile", &["--db", &db, "redrive", "no-such-event"]);
    assert_refused(
        &unknown,
        1,
        "reconcile",
        "no event no-such-event; nothing changed",
    );
    let failed = run(
        "reconcile",
        &["--db", &db, "fail", &event, "--reason", "withdrawn"],
    );
    assert_eq!(
        stdout(&failed),
        format!("fail: event {event} is now failed (withdrawn)\n")
    );
    let again = run(
        "reconcile",
        &["--db", &db, "fail", &event, "--reason", "withdrawn"],
    );
    assert_eq!(
        stdout(&again),
        format!("fail: event {event} was already failed (withdrawn); nothing changed\n")
    );
    let redrive = run("reconcile", &["--db", &db, "redrive", &event]);
    assert_refused(
        &redrive,
        1,
        "reconcile",
        "was marked failed: withdrawn; nothing changed",
    );
    let stored = SqliteOutbox::open(file.path(), DocumentsOptions::default()).expect("opens");
    let row = stored.find(&event).expect("reads").expect("the event");
    assert_eq!(
        (row.state, row.reason.as_deref()),
        (EventState::Failed, Some("withdrawn"))
    );
}
