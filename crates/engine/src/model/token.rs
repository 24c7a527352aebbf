//! Murmur3Partitioner tokens (placeholder; replaced by the token work).
use super::key::Token;
/// Token of a serialized partition key.
pub fn token_of(_key: &[u8]) -> Token {
    Token(0)
}
