//! Resume states are stored compressed.
//!
//! A source's resume state is opaque bytes (JSON for every source so far) holding what an
//! append needs from the part of the file already parsed: message ids and their parents, usage
//! keys, tool names. That is mostly ids, and on a large Claude Code history the states were 4%
//! of the store; zlib at its fastest level shrinks them about 3.6 times. Compression runs on the
//! parsing threads, not on the single writer.

use std::io::{Read, Write};

use flate2::{read::ZlibDecoder, write::ZlibEncoder, Compression};

/// Marks a compressed state; a state stored by an older trail (raw JSON) lacks it.
const MAGIC: &[u8] = b"trail-z1:";

/// Compresses a state for the store.
pub(crate) fn pack(state: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + state.len() / 3);
    out.extend_from_slice(MAGIC);
    let mut enc = ZlibEncoder::new(out, Compression::fast());
    // Writing into a Vec cannot fail.
    enc.write_all(state).expect("writing to memory");
    enc.finish().expect("writing to memory")
}

/// Returns the state a source wrote, from what the store holds. A damaged compressed state
/// comes back empty: every source takes an unreadable state as "parse the file again".
pub(crate) fn unpack(stored: Vec<u8>) -> Vec<u8> {
    let Some(compressed) = stored.strip_prefix(MAGIC) else {
        return stored;
    };
    let mut out = Vec::with_capacity(compressed.len() * 4);
    match ZlibDecoder::new(compressed).read_to_end(&mut out) {
        Ok(_) => out,
        Err(e) => {
            tracing::warn!(error = %e, "a stored resume state is damaged; the file is parsed again");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_older_raw_states() {
        let state = br#"{"nodes":[{"uuid":"7b0a4f2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}]}"#.repeat(50);
        let packed = pack(&state);
        assert!(packed.len() < state.len() / 3);
        assert_eq!(unpack(packed), state);
        assert_eq!(
            unpack(state.clone()),
            state,
            "raw JSON from an older store passes through"
        );
        assert_eq!(unpack(pack(b"")), b"");
    }

    #[test]
    fn a_damaged_state_reads_as_none() {
        let mut packed = pack(b"{\"a\": 1}");
        let last = packed.len() - 1;
        packed[last] ^= 0xff;
        assert_eq!(unpack(packed), b"");
    }
}
