// Mirrored by labs/fresh-foreign-key: see labs/README.md before changing this file.
//! The key of a foreign call: derived from the operation's key, never drawn fresh.
//!
//! A checkout that calls the provider under a new key on each attempt turns every retry into a
//! new charge: the provider cannot tell "the same charge again" from "another charge". The key
//! is therefore a function of the operation (its [`EntryId`]: the caller's scope and its key)
//! and of which call it is, so that the first attempt, a client's retry that resumes from a
//! recovery point and a completer that finishes the operation later all present the same one.

use retrykey::Key;
use retrykey_http::EntryId;
use sha2::{Digest, Sha256};

/// What every derived key starts with, so that the provider's records show where it came from.
pub const FOREIGN_KEY_PREFIX: &str = "fk-";

/// Hex digits of the digest a key keeps: 128 bits, past any collision between operations.
const DIGEST_HEX: usize = 32;

// ANCHOR: foreign_key
/// The key of the foreign call named `call` (`"charge"`) of the operation `operation`: the same
/// for every attempt of that operation, different for every other operation or call.
///
/// The key holds only the prefix and hex digits, so it travels bare in an `Idempotency-Key`
/// header, and it tells nothing of the operation's own key.
pub fn foreign_key(operation: &EntryId, call: &str) -> Key {
    let mut hasher = Sha256::new();
    hasher.update(b"retrykey-foreign key v1\n");
    hasher.update(operation.as_bytes());
    hasher.update(call.as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest
        .iter()
        .flat_map(|byte| [byte >> 4, byte & 0x0f])
        .take(DIGEST_HEX)
        .map(|nibble| char::from_digit(u32::from(nibble), 16).unwrap_or('0'))
        .collect();
    Key::new(format!("{FOREIGN_KEY_PREFIX}{hex}"))
        .expect("a prefix and hex digits make a valid key")
}
// ANCHOR_END: foreign_key
