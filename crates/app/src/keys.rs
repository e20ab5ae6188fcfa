//! API key secrets: random, shown once, stored and compared only as SHA-256.

use sha2::{Digest, Sha256};

/// SHA-256 hex of a key.
pub fn hash_key(key: &str) -> String {
    Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh random key: 32 bytes from the OS, hex, with a readable prefix.
pub fn new_key(prefix: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(format!("{prefix}_{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}
