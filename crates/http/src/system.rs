//! The real clock and id generator the service runs with.

use std::sync::Mutex;

use chrono::Utc;
use retold_domain::{Clock, IdGenerator, Timestamp};

/// Wall-clock time.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Utc::now()
    }
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// ULIDs: 48 bits of milliseconds, then 80 bits that start random and count up within a
/// millisecond, so ids are unique and sort by creation time.
#[derive(Debug)]
pub struct UlidIds {
    state: Mutex<(u64, u128)>,
}

impl UlidIds {
    /// A generator seeded from the OS.
    pub fn new() -> std::io::Result<Self> {
        Ok(Self { state: Mutex::new((0, random_u128()?)) })
    }
}

fn random_u128() -> std::io::Result<u128> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(u128::from_le_bytes(bytes))
}

impl IdGenerator for UlidIds {
    fn next_body(&self) -> String {
        let now = u64::try_from(Utc::now().timestamp_millis()).unwrap_or(0) & ((1 << 48) - 1);
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (last, counter) = &mut *state;
        if now > *last {
            *last = now;
            // Keep the low bits' randomness, restart the count.
            *counter = (*counter).wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407)
                & ((1u128 << 79) - 1);
        } else {
            *counter = (*counter + 1) & ((1u128 << 80) - 1);
        }
        let value: u128 = (u128::from(*last) << 80) | *counter;
        (0..26).rev().map(|i| CROCKFORD[((value >> (i * 5)) & 31) as usize] as char).collect()
    }
}
