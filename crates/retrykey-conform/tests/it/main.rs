//! The kit against real servers on 127.0.0.1: the lab's payments on each store passes every
//! check; the same handler with no idempotency fails the checks it must, with short witnesses;
//! servers that choose otherwise where the draft lets them pass once their profile says so;
//! bad profiles and flags are refused before any request; and answers are read as HTTP/1.1
//! frames them, from servers scripted byte for byte.

mod designs;
mod no_idempotency;
mod payments;
mod profile;
mod program;
mod servers;
mod wire;
