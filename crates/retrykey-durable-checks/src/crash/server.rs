//! The crash server: a ledger behind a line protocol on stdin/stdout, killed by failpoints.
//!
//! Protocol, one line each way: `ping` → `ready`; `apply <key> <job> <units>` →
//! `ok <operation> <total> fresh|replayed` or `err <message>`; `state` →
//! `state <total> <records>`. End of input ends the process. With `FAILPOINTS=<point>=return`
//! in its environment the process aborts at that point (see [`retrykey_durable::crash`]).

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};

use retrykey::{Key, Ledger, Receipt, Request};

use retrykey_durable::options::unix_seconds;
use retrykey_durable::{LedgerOptions, PgLedger, SqliteLedger, pg};

use crate::admin::Admin;

/// Opens a ledger on a backend; the crash server of each variant passes its own.
pub type Opener = fn(&Backend, LedgerOptions) -> Result<Box<dyn Ledger>, retrykey_durable::Error>;

/// Where the ledger lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A schema in a PostgreSQL database.
    Pg {
        /// The connection URL.
        url: String,
        /// The schema that holds the tables.
        schema: String,
    },
}

static NEXT: AtomicU64 = AtomicU64::new(0);

fn unique() -> String {
    format!(
        "{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        unix_seconds(std::time::SystemTime::now())
    )
}

impl Backend {
    /// A new SQLite file under the temporary directory.
    pub fn fresh_sqlite() -> Self {
        Backend::Sqlite(std::env::temp_dir().join(format!("retrykey-crash-{}.sqlite", unique())))
    }

    /// A new schema in the database at `url`.
    pub fn fresh_pg(url: &str) -> Self {
        Backend::Pg {
            url: url.to_owned(),
            schema: format!("rk_crash_{}", unique()),
        }
    }

    /// The crash server's arguments for this backend (the URL travels in the environment).
    pub fn args(&self) -> Vec<String> {
        match self {
            Backend::Sqlite(path) => vec!["--sqlite".into(), path.display().to_string()],
            Backend::Pg { schema, .. } => vec!["--pg-schema".into(), schema.clone()],
        }
    }

    /// Deletes the database (file or schema); failures are ignored.
    pub fn remove(&self) {
        match self {
            Backend::Sqlite(path) => retrykey_durable::sqlite::remove_files(path),
            Backend::Pg { url, schema } => {
                // One plain connection: a ledger's pool would first create what is dropped.
                if let Ok(admin) = Admin::connect(url, schema) {
                    let _ = admin.batch(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
                }
            }
        }
    }
}

/// How a receipt was delivered, as the crash server's replies and the matrix print it.
pub fn delivery(receipt: &Receipt) -> &'static str {
    if receipt.replayed {
        "replayed"
    } else {
        "fresh"
    }
}

/// Opens the correct ledgers of this crate.
pub fn open_correct(
    backend: &Backend,
    options: LedgerOptions,
) -> Result<Box<dyn Ledger>, retrykey_durable::Error> {
    Ok(match backend {
        Backend::Sqlite(path) => Box::new(SqliteLedger::open(path, options)?),
        Backend::Pg { url, schema } => Box::new(PgLedger::open(url, pg_options(schema, options))?),
    })
}

/// `options` for a one-connection PostgreSQL ledger in `schema`.
pub fn pg_options(schema: &str, options: LedgerOptions) -> LedgerOptions {
    LedgerOptions {
        pg_schema: schema.to_owned(),
        pg_connections: 1,
        ..options
    }
}

/// What `--help` prints: the flags, and the protocol spoken on stdin and stdout.
const HELP: &str = "\
usage: crash-server (--sqlite PATH | --pg-schema NAME)

Serves one ledger over stdin and stdout, one line each way, until end of
input: `ping` -> `ready`; `apply KEY JOB UNITS` -> `ok OPERATION TOTAL
fresh|replayed` or `err MESSAGE`; `state` -> `state TOTAL RECORDS`. With
FAILPOINTS=POINT=return in its environment (a build with the failpoints
feature) it aborts at that crash point.

  --sqlite PATH      the ledger in the SQLite file PATH
  --pg-schema NAME   the ledger in schema NAME of the PostgreSQL database
                     at RETRYKEY_PG_URL
  -h, --help         print this help
";

/// The crash server's `main`: parses `--sqlite PATH` or `--pg-schema NAME` (the URL comes from
/// `RETRYKEY_PG_URL`), opens the ledger with `open`, and serves the protocol until end of input.
pub fn main(open: Opener) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag] = args.as_slice()
        && (flag == "-h" || flag == "--help")
    {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    // A crash point asked for in a build without them stops the server here, so that a
    // scenario cannot pass by never crashing.
    let _failpoints = match retrykey_crashpoints::scenario() {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("crash-server: {error}");
            return ExitCode::from(2);
        }
    };
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let backend = match words.as_slice() {
        ["--sqlite", path] => Backend::Sqlite(PathBuf::from(path)),
        ["--pg-schema", schema] => match pg::url_from_env() {
            Some(url) => Backend::Pg {
                url,
                schema: (*schema).to_owned(),
            },
            None => {
                eprintln!("crash-server: set {} to use PostgreSQL", pg::URL_VAR);
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: crash-server (--sqlite PATH | --pg-schema NAME) (see --help)");
            return ExitCode::from(2);
        }
    };
    let ledger = match open(&backend, LedgerOptions::default()) {
        Ok(ledger) => ledger,
        Err(error) => {
            eprintln!("crash-server: cannot open the ledger: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let reply = serve_line(ledger.as_ref(), &line);
        if writeln!(stdout, "{reply}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            break;
        }
    }
    ExitCode::SUCCESS
}

fn serve_line(ledger: &dyn Ledger, line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["ping"] => "ready".to_owned(),
        ["state"] => match (ledger.total(), ledger.records()) {
            (Ok(total), Ok(records)) => format!("state {total} {records}"),
            (Err(error), _) | (_, Err(error)) => format!("err {error}"),
        },
        ["apply", key, job, units] => {
            let applied = Key::new(*key).and_then(|key| {
                let request = Request::parse(*job, units)?;
                ledger.apply(&key, &request)
            });
            match applied {
                Ok(receipt) => format!(
                    "ok {} {} {}",
                    receipt.operation,
                    receipt.total,
                    delivery(&receipt)
                ),
                Err(error) => format!("err {error}"),
            }
        }
        _ => format!("err unknown request {line:?}"),
    }
}
