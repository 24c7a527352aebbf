//! The token ring: every node's tokens in order, and who owns which range.
//!
//! Murmur3 tokens run from `i64::MIN` (the minimum token, which no key has) to `i64::MAX`,
//! and wrap around. A node owns the range `(previous token, its token]` for each of its
//! tokens; the first token owns the wrapping range from the last token. Replicas of a token
//! are found by walking the ring clockwise from the first token at or after it
//! ([`TokenRing::walk`], used by [`crate::placement`]).
//!
//! Invariants: tokens are sorted and unique (two nodes never share a token); every token
//! names an endpoint of [`TokenRing::endpoints`]. A ring may be empty (a node not yet
//! started) or hold endpoints without tokens (they own nothing).

use crate::error::{Error, Result};
use crate::node::{Endpoint, HostId};
use cairn_engine::model::Token;

/// The ring: endpoints and their tokens.
#[derive(Debug, Clone, Default)]
pub struct TokenRing {
    endpoints: Vec<Endpoint>,
    /// (token, index into `endpoints`), sorted by token.
    tokens: Vec<(Token, usize)>,
}

/// A range of tokens `(start, end]`; when `start >= end` it wraps past `i64::MAX` (and a
/// range with `start == end` is the whole ring, as for a ring of one token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRange {
    /// Exclusive start.
    pub start: Token,
    /// Inclusive end.
    pub end: Token,
}

impl TokenRange {
    /// The share of the ring the range covers, in `(0, 1]`.
    pub fn fraction(&self) -> f64 {
        let width = (self.end.0 as u64).wrapping_sub(self.start.0 as u64);
        if width == 0 {
            1.0
        } else {
            width as f64 / 2f64.powi(64)
        }
    }

    /// Whether `t` is in the range.
    pub fn contains(&self, t: Token) -> bool {
        if self.start < self.end {
            self.start < t && t <= self.end
        } else {
            t > self.start || t <= self.end
        }
    }
}

impl TokenRing {
    /// A ring of `nodes`, each with its tokens. Two nodes with the same token, or a token
    /// that is the minimum token, are refused.
    pub fn new(nodes: Vec<(Endpoint, Vec<Token>)>) -> Result<TokenRing> {
        let mut endpoints = Vec::with_capacity(nodes.len());
        let mut tokens = Vec::new();
        for (i, (endpoint, ts)) in nodes.into_iter().enumerate() {
            for t in ts {
                if t == Token::MIN {
                    return Err(Error::InvalidToken(t.to_string()));
                }
                tokens.push((t, i));
            }
            endpoints.push(endpoint);
        }
        tokens.sort_unstable();
        for pair in tokens.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Err(Error::DuplicateToken {
                    token: pair[0].0 .0,
                    first: endpoints[pair[0].1].host_id.to_string(),
                    second: endpoints[pair[1].1].host_id.to_string(),
                });
            }
        }
        Ok(TokenRing { endpoints, tokens })
    }

    /// The endpoints, in the order they were given.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// The index of the endpoint with `host_id`.
    pub fn position(&self, host_id: HostId) -> Option<usize> {
        self.endpoints.iter().position(|e| e.host_id == host_id)
    }

    /// Every token with its endpoint's index, sorted.
    pub fn tokens(&self) -> &[(Token, usize)] {
        &self.tokens
    }

    /// The tokens of endpoint `i`, sorted.
    pub fn tokens_of(&self, i: usize) -> Vec<Token> {
        self.tokens
            .iter()
            .filter(|(_, e)| *e == i)
            .map(|(t, _)| *t)
            .collect()
    }

    /// True when no endpoint has a token.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Index into [`TokenRing::tokens`] of the first token at or after `t`, wrapping to the
    /// first token (Cassandra's `TokenMetadata.firstToken`). `None` for an empty ring.
    pub fn first_index(&self, t: Token) -> Option<usize> {
        if self.tokens.is_empty() {
            return None;
        }
        let i = self.tokens.partition_point(|(x, _)| *x < t);
        Some(if i == self.tokens.len() { 0 } else { i })
    }

    /// One lap of the ring clockwise from the first token at or after `t`: (token, endpoint).
    pub fn walk(&self, t: Token) -> impl Iterator<Item = (Token, usize)> + '_ {
        let start = self.first_index(t).unwrap_or(0);
        let n = self.tokens.len();
        (0..n).map(move |k| self.tokens[(start + k) % n])
    }

    /// The range ending at the first token at or after `t`: the range whose replicas hold
    /// `t`. `None` for an empty ring.
    pub fn range_of(&self, t: Token) -> Option<TokenRange> {
        let i = self.first_index(t)?;
        Some(self.range_at(i))
    }

    /// The range ending at token `i` of [`TokenRing::tokens`].
    pub fn range_at(&self, i: usize) -> TokenRange {
        let n = self.tokens.len();
        let prev = (i + n - 1) % n;
        TokenRange {
            start: self.tokens[prev].0,
            end: self.tokens[i].0,
        }
    }

    /// Every range of the ring with the endpoint owning it (its primary replica), in token
    /// order.
    pub fn ranges(&self) -> Vec<(TokenRange, usize)> {
        (0..self.tokens.len())
            .map(|i| (self.range_at(i), self.tokens[i].1))
            .collect()
    }

    /// Each endpoint's share of the ring as the primary owner of its ranges (nodetool's
    /// "Owns" without a keyspace), indexed like [`TokenRing::endpoints`].
    pub fn primary_ownership(&self) -> Vec<f64> {
        let mut owns = vec![0.0; self.endpoints.len()];
        for (range, e) in self.ranges() {
            owns[e] += range.fraction();
        }
        owns
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::node::test_endpoint;

    #[test]
    fn first_token_at_or_after_wraps() {
        let ring = TokenRing::new(vec![
            (test_endpoint(1), vec![Token(-100), Token(200)]),
            (test_endpoint(2), vec![Token(0)]),
        ])
        .unwrap();
        let first = |t| ring.tokens()[ring.first_index(Token(t)).unwrap()];
        assert_eq!(first(-100), (Token(-100), 0));
        assert_eq!(first(-99), (Token(0), 1));
        assert_eq!(first(0), (Token(0), 1));
        assert_eq!(first(201), (Token(-100), 0));
        assert_eq!(first(i64::MIN), (Token(-100), 0));
        let lap: Vec<_> = ring.walk(Token(1)).map(|(t, _)| t.0).collect();
        assert_eq!(lap, [200, -100, 0]);
    }

    #[test]
    fn ranges_end_at_their_token_and_wrap() {
        let ring = TokenRing::new(vec![
            (test_endpoint(1), vec![Token(-100), Token(200)]),
            (test_endpoint(2), vec![Token(0)]),
        ])
        .unwrap();
        let r = ring.range_of(Token(300)).unwrap();
        assert_eq!((r.start, r.end), (Token(200), Token(-100)));
        assert!(r.contains(Token(i64::MAX)) && r.contains(Token(-100)));
        assert!(!r.contains(Token(-99)) && !r.contains(Token(200)));
        let owns = ring.primary_ownership();
        assert!((owns[0] + owns[1] - 1.0).abs() < 1e-12);
        assert!((owns[1] - 100.0 / 2f64.powi(64)).abs() < 1e-15);
    }

    #[test]
    fn one_token_owns_everything() {
        let ring = TokenRing::new(vec![(test_endpoint(1), vec![Token(42)])]).unwrap();
        let r = ring.range_of(Token(-5)).unwrap();
        assert_eq!(r.fraction(), 1.0);
        assert!(r.contains(Token(42)) && r.contains(Token(43)) && r.contains(Token(-5)));
    }

    #[test]
    fn shared_and_minimum_tokens_are_refused() {
        let dup = TokenRing::new(vec![
            (test_endpoint(1), vec![Token(7)]),
            (test_endpoint(2), vec![Token(7)]),
        ]);
        assert!(matches!(dup, Err(Error::DuplicateToken { token: 7, .. })));
        let min = TokenRing::new(vec![(test_endpoint(1), vec![Token::MIN])]);
        assert!(matches!(min, Err(Error::InvalidToken(_))));
        assert!(TokenRing::new(vec![])
            .unwrap()
            .first_index(Token(0))
            .is_none());
    }
}
