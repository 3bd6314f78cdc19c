//! The checks themselves, one function per behaviour, each opened by the requirement it checks.

use retrykey_http::{Reserve, TYPE_BASE};
use retrykey_program::Clock;
use retrykey_server::loopback::LoopbackReply;

use crate::ReplicasUnderTest;
use crate::rig::{AHEAD, Cluster, Replica, run, within};

/// `reply` is a replay of `first`: the same status and body, marked `Idempotent-Replayed`.
#[track_caller]
fn assert_replay_of(reply: &LoopbackReply, first: &LoopbackReply, what: &str) {
    assert_eq!(
        (reply.status, reply.body.as_str(), reply.replayed()),
        (first.status, first.body.as_str(), true),
        "{what}: (status, body, replayed) of {reply:?}"
    );
}

/// `reply` is the first answer of a key: 201, not a replay.
#[track_caller]
fn assert_original(reply: &LoopbackReply, what: &str) {
    assert_eq!(
        (reply.status, reply.replayed()),
        (201, false),
        "{what}: (status, replayed) of {reply:?}"
    );
}

/// 30 concurrent duplicates of one key, spread over 3 replicas and all in flight at once: one
/// charge in the shared file, and 30 answers of 201 with that charge's body, one of them original.
pub fn spray_of_one_key_charges_once(subject: &ReplicasUnderTest) {
    run(|path| async move {
        let cluster = Cluster::new(subject, path);
        let replicas = [
            cluster.replica("replica-a", Clock::system()).await,
            cluster.replica("replica-b", Clock::system()).await,
            cluster.replica("replica-c", Clock::system()).await,
        ];
        let requests = 30;
        // Every request may park: the one that runs the handler waits at its gate until every
        // other one has found the key in flight, so all 30 overlap on every run.
        let pending: Vec<_> = (0..requests)
            .map(|n| replicas[n % replicas.len()].send("k-spray", true))
            .collect();
        within(
            "all 30 requests to park at a gate or wait on the key",
            cluster.parked(requests),
        )
        .await;
        for replica in &replicas {
            replica.signals.open_gate();
        }
        let mut replies = Vec::new();
        for pending in pending {
            replies.push(Replica::reply(pending).await);
        }
        assert_eq!(
            cluster.charges().await,
            1,
            "charges in the shared file after 30 duplicates of one key on 3 replicas"
        );
        let originals: Vec<_> = replies.iter().filter(|reply| !reply.replayed()).collect();
        assert_eq!(
            originals.len(),
            1,
            "exactly one original answer: {originals:?}"
        );
        let first = originals[0];
        assert_original(first, "the attempt that charged");
        for reply in replies.iter().filter(|reply| reply.replayed()) {
            assert_replay_of(reply, first, "a duplicate");
        }
    });
}

/// A duplicate sent to replica B while the first attempt runs on replica A waits for that
/// attempt, by polling the shared file, and answers with its result: B's handler never runs.
pub fn duplicate_on_another_replica_gets_the_first_answer(subject: &ReplicasUnderTest) {
    run(|path| async move {
        let cluster = Cluster::new(subject, path);
        let a = cluster.replica("replica-a", Clock::system()).await;
        let b = cluster.replica("replica-b", Clock::system()).await;
        let first = a.send("k-dup", true);
        within("A's handler to start", a.signals.held(1)).await;
        let mut duplicate = b.send("k-dup", false);
        // B must have found the key in flight before A is let go; a B that answers on its own
        // instead is caught by the asserts below.
        let early = within("B to find the key in flight, or to answer", async {
            tokio::select! {
                () = b.signals.in_flight_seen(1) => None,
                reply = &mut duplicate => Some(reply),
            }
        })
        .await;
        a.signals.open_gate();
        let first = Replica::reply(first).await;
        let duplicate = match early {
            Some(reply) => reply
                .expect("the request task")
                .unwrap_or_else(|error| panic!("B's request failed: {error}")),
            None => Replica::reply(duplicate).await,
        };
        assert_eq!(
            cluster.charges().await,
            1,
            "charges in the shared file after one request and its duplicate on another replica \
             ({} answered {duplicate:?})",
            b.owner
        );
        assert_original(&first, "A's first attempt");
        assert_replay_of(&duplicate, &first, "B's duplicate, which waited for A");
        assert_eq!(b.attempts(), 0, "times B's handler ran for a duplicate");
    });
}

/// Replica A reserves a key and pauses inside its handler; replica B, whose clock says A's lease
/// has lapsed, takes the key over with a higher token, and is still running when A wakes. The
/// shared file refuses A's charge (A's client gets 503 `lease-lost`) though the key is still in
/// flight; B then charges: one charge, B's, and a retry on A replays B's answer.
pub fn paused_owner_cannot_charge_after_takeover(subject: &ReplicasUnderTest) {
    run(|path| async move {
        let cluster = Cluster::new(subject, path);
        let a = cluster.replica("replica-a", Clock::system()).await;
        let b = cluster.replica("replica-b", Clock::ahead(AHEAD)).await;
        let paused = a.send("k-paused", true);
        within("A's handler to start", a.signals.held(1)).await;
        let first = cluster.holder("k-paused").await;

        // B takes the key over and is held inside its handler in turn: the key is in flight,
        // now under B's token, when A wakes.
        let taking = b.send("k-paused", true);
        within("B's handler to start", b.signals.held(1)).await;
        let after_takeover = cluster.holder("k-paused").await;

        a.signals.open_gate();
        let woken = Replica::reply(paused).await;
        // The effect first; the records below explain it.
        assert_eq!(
            cluster.charges().await,
            0,
            "charges after the paused owner woke up, while the new owner still runs (A's \
             client got {woken:?})"
        );
        let lease_lost = format!("\"type\":\"{TYPE_BASE}lease-lost\"");
        assert!(
            woken.status == 503 && woken.body.contains(&lease_lost),
            "the woken owner's client is told its attempt lost the key: {woken:?}"
        );
        let first = first.expect("A's reservation is in the shared file");
        assert_eq!(
            (first.owner.as_str(), first.finished),
            ("replica-a", false),
            "while A is paused, A holds the key in flight: {first:?}"
        );
        let holder = after_takeover.expect("the key's record is in the shared file");
        assert!(
            holder.token > first.token && holder.owner == "replica-b" && !holder.finished,
            "after the takeover the key is B's, in flight, under a higher token than A's {:?}: \
             {holder:?}",
            first.token
        );

        b.signals.open_gate();
        let taken = Replica::reply(taking).await;
        assert_original(&taken, "B, the new owner, charges once it runs on");
        assert_eq!(cluster.charges().await, 1, "charges once B has finished");
        let retry = a.post("k-paused").await;
        assert_replay_of(&retry, &taken, "a retry after the takeover gets B's answer");
        assert_eq!(
            cluster.holder("k-paused").await.map(|holder| holder.token),
            Some(holder.token),
            "the woken owner changed nothing: the key keeps B's token"
        );
    });
}

/// A replica killed after reserving a key leaves it in flight, and nobody renews its lease.
/// Once the lease has lapsed, a request on another replica takes the key over with a higher
/// token, runs the handler once and answers 201, and a retry on a third replica replays it.
pub fn abandoned_key_is_taken_over_after_its_lease(subject: &ReplicasUnderTest) {
    run(|path| async move {
        let cluster = Cluster::new(subject, path);
        let abandoned = cluster
            .killed_mid_request("replica-killed", "k-abandoned")
            .await;
        let b = cluster.replica("replica-b", Clock::ahead(AHEAD)).await;
        let c = cluster.replica("replica-c", Clock::system()).await;

        let reply = b.post("k-abandoned").await;
        assert_original(
            &reply,
            "the key of a killed replica, once its lease has lapsed, is taken over",
        );
        assert_eq!(b.attempts(), 1, "times B's handler ran");
        let retry = c.post("k-abandoned").await;
        assert_replay_of(&retry, &reply, "a retry on a third replica gets B's answer");
        assert_eq!(
            cluster.charges().await,
            1,
            "charges after the takeover and a retry"
        );
        let holder = cluster
            .holder("k-abandoned")
            .await
            .expect("the key's record is in the shared file");
        assert!(
            holder.token > abandoned && holder.owner == "replica-b" && holder.finished,
            "the key is B's, finished, under a higher token than the killed replica's \
             {abandoned:?}: {holder:?}"
        );
    });
}

/// A shared file bounded at 2 keys refuses a third new key as full and writes no row for it,
/// while a key it already holds is still found: the bound holds for a claim as for every store.
pub fn full_shared_file_refuses_new_keys(subject: &ReplicasUnderTest) {
    run(|path| async move {
        let cluster = Cluster::new(subject, path);
        let store = cluster.bounded_store("replica-a", 2).await;
        for key in ["k-first", "k-second"] {
            let reserved = Cluster::reserve(&*store, key).await;
            assert!(
                matches!(reserved, Reserve::Reserved(_)),
                "a new key while the file holds fewer than 2: {reserved:?}"
            );
        }
        let refused = Cluster::reserve(&*store, "k-third").await;
        assert!(
            matches!(refused, Reserve::Full),
            "a third new key in a file bounded at 2 keys is refused as full: {refused:?}"
        );
        assert!(
            cluster.holder("k-third").await.is_none(),
            "the refused key left no row in the shared file"
        );
        let again = Cluster::reserve(&*store, "k-first").await;
        assert!(
            matches!(again, Reserve::Taken),
            "a key the full file holds in flight is still found: {again:?}"
        );
    });
}
