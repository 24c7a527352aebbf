//! Murmur3Partitioner tokens (placeholder; replaced by the token work).
use super::key::Token;
/// Token of a serialized partition key.
pub fn token_of(_key: &[u8]) -> Token {
    Token(0)
}
/// PLACEHOLDER murmur3 (replaced by the token work).
pub fn murmur3_x64_128(data: &[u8], _seed: u64) -> (u64, u64) {
    let h = crc32fast::hash(data) as u64;
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15), h ^ 0xDEAD_BEEF)
}
