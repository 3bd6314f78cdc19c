//! The macros that turn the check tables into `#[test]` functions, one module per suite.
//!
//! As in `retrykey-contract`, a suite macro takes its constructor and, optionally, one attribute
//! put on every test it makes: `crash_suite!(#[cfg_attr(not(retrykey_pg), ignore = "...")]
//! make)` makes the PostgreSQL crash tests *ignored*, never passed, without a server.

/// A `#[test]` that needs the PostgreSQL server at `RETRYKEY_PG_URL`.
///
/// Without the server the test is *ignored* (`cargo test` counts it so, with the reason), never
/// passed: the choice is made when the tests are built, by the cfg `retrykey_pg` that
/// `crates/retrykey-durable/build.rs` sets, so the package that uses this macro must use that
/// build script. Under CI the test always runs, and a missing server fails it.
#[macro_export]
macro_rules! postgres_test {
    ($(#[$doc:meta])* fn $name:ident() $body:block) => {
        $(#[$doc])*
        #[test]
        #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
        fn $name() $body
    };
}

/// The crash scenarios as `#[test]`s in a module named `crash`, one per point.
///
/// `$make` is an expression that returns a fresh
/// [`Harness`](crate::crash::harness::Harness) over a fresh database each time it is evaluated.
/// `crash_suite!(#[attribute] make)` puts the attribute on every test.
#[macro_export]
macro_rules! crash_suite {
    (#[$attr:meta] $make:expr) => {
        $crate::__with_crash_checks!(tests {
            #[$attr]
            $make
        });
    };
    ($make:expr) => {
        $crate::crash_suite!(
            #[cfg_attr(any(), ignore)]
            $make
        );
    };
}

/// The connection checks as `#[test]`s in a module named `connections`.
///
/// `$open` is an expression of type
/// `Fn(&str, Options) -> Result<L, retrykey_durable::Error>`. Without `RETRYKEY_PG_URL` the
/// tests are ignored, not passed (see [`postgres_test!`](crate::postgres_test)).
#[macro_export]
macro_rules! connections_suite {
    ($open:expr) => {
        $crate::__with_connection_checks!(tests { $open });
    };
}

/// What the crash table expands to: the named table of points, or `#[test]`s in a module
/// `crash`, each on a fresh harness.
#[doc(hidden)]
#[macro_export]
macro_rules! __crash_checks {
    (table {} $($name:ident $point:ident)*) => {
        $crate::__checks::table!(crash: $( $name => $crate::crash::Point::$point ),*)
    };
    (tests { #[$attr:meta] $make:expr } $($name:ident $point:ident)*) => {
        $crate::__checks::tests! {
            mod crash;
            #[$attr]
            $(
                fn $name() {
                    let harness = $make;
                    let point = $crate::crash::Point::$point;
                    if let Err(problem) = $crate::crash::scenario::check(&harness, point) {
                        panic!("{problem}");
                    }
                }
            )*
        }
    };
}

/// What the connection table expands to: the named table, or `#[test]`s in a module
/// `connections` that need PostgreSQL (see [`postgres_test!`](crate::postgres_test)).
#[doc(hidden)]
#[macro_export]
macro_rules! __connection_checks {
    (table { $ledger:ty } $($name:ident)*) => {
        $crate::__checks::table!(connections: $(
            $name => $crate::connections::$name as $crate::ConnectionCheck<$ledger>
        ),*)
    };
    (tests { $open:expr } $($name:ident)*) => {
        $crate::__checks::tests! {
            mod connections;
            #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
            $( fn $name() { $crate::__run_connection_check($crate::connections::$name, &$open); } )*
        }
    };
}
