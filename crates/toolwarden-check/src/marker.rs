//! The per-run marker: a value that looks like a secret, so that a server (or a gateway) that
//! echoes caller values, or masks only what looks like a token, is caught in the act.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

const ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `len` random alphanumerics. Not for cryptography: it only has to be unique to this run, so
/// the per-process random hasher keys, the clock and the pid are enough.
pub fn random_alphanumerics(len: usize) -> String {
    let state = RandomState::new();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or_default();
    let mut out = String::with_capacity(len);
    let mut counter: u64 = 0;
    while out.len() < len {
        let mut hasher = state.build_hasher();
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        hasher.write_u64(counter);
        let mut bits = hasher.finish();
        // Ten draws of 6 bits per hash; 62 symbols, so the few values above 61 are skipped.
        for _ in 0..10 {
            let index = (bits & 0x3f) as usize;
            bits >>= 6;
            if let Some(&symbol) = ALPHANUMERIC.get(index)
                && out.len() < len
            {
                out.push(char::from(symbol));
            }
        }
        counter += 1;
    }
    out
}

/// A GitHub-token-shaped marker: `ghp_` and 36 alphanumerics.
pub fn secret_marker() -> String {
    format!("ghp_{}", random_alphanumerics(36))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_look_like_tokens_and_differ() {
        let first = secret_marker();
        let second = secret_marker();
        assert_eq!(first.len(), 40);
        assert!(first.starts_with("ghp_"));
        assert!(first[4..].chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(first, second);
    }
}
