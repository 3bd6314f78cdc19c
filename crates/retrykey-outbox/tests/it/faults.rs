//! The fault table with real processes: a `converter` and `dispatcher`s on loopback, one of them
//! killed with SIGKILL (or stopped, or its database restarted) mid-run and started again. Every
//! row must end with each accepted job converted exactly once, no event lost, none invented.
//! `just outbox-faults` prints the same rows as a table.

use retrykey_durable::pg::url_from_env;
use retrykey_outbox_checks::faults::{Fault, Place, Programs, converter_binary, run};

fn programs() -> Programs {
    Programs {
        dispatcher: env!("CARGO_BIN_EXE_dispatcher").into(),
        converter: converter_binary(),
    }
}

fn on_sqlite(fault: Fault) {
    run(fault, &programs(), Place::sqlite()).assert_holds();
}

fn on_postgres(fault: Fault) {
    let place = if fault.restarts_the_database() {
        Place::private_postgres().unwrap_or_else(|why| panic!("a private server: {why}"))
    } else {
        let url = url_from_env()
            .expect("RETRYKEY_PG_URL is set: this test was built to run on PostgreSQL");
        Place::postgres(&url)
    };
    run(fault, &programs(), place).assert_holds();
}

/// One test per row and backend.
macro_rules! faults {
    ($($sqlite:ident, $postgres:ident: $fault:expr;)*) => {
        $(
            #[test]
            fn $sqlite() {
                on_sqlite($fault);
            }

            #[test]
            #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
            fn $postgres() {
                on_postgres($fault);
            }
        )*
    };
}

faults! {
    dispatcher_killed_after_sending_sqlite, dispatcher_killed_after_sending_postgres:
        Fault::DispatcherAfterSending;
    consumer_killed_after_converting_sqlite, consumer_killed_after_converting_postgres:
        Fault::ConsumerAfterConverting;
    consumer_down_for_a_while_sqlite, consumer_down_for_a_while_postgres:
        Fault::ConsumerDown;
    consumer_stopped_for_a_while_sqlite, consumer_stopped_for_a_while_postgres:
        Fault::ConsumerStopped;
    two_dispatchers_one_killed_sqlite, two_dispatchers_one_killed_postgres:
        Fault::TwoDispatchers;
}

// The database restart needs a server of the test's own: PostgreSQL only.
#[test]
#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
fn database_restarted_mid_run_postgres() {
    on_postgres(Fault::DatabaseRestarted);
}
