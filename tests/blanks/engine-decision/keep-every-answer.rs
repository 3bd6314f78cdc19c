// Refused by http_suite::server_error_releases_the_key: every answer is kept, so a 500 that
// came before the work was done is replayed to every retry.
fn worth_keeping(status: StatusCode) -> bool {
    true
}
