//! Choosing a node's tokens.
//!
//! `initial_token` in the configuration names them; otherwise they are chosen so that
//! ownership stays balanced, deterministically from what the ring holds:
//!
//! - the first node of a ring takes `num_tokens` evenly spaced tokens, shifted by an offset
//!   drawn from its host id (two fresh clusters do not share tokens);
//! - a node joining a ring aims at an equal share, `1 / (nodes + 1)` of the ring, taken in
//!   `num_tokens` equal pieces: each new token goes into the largest range of the node that
//!   owns the most at that moment and takes a piece from its start (never more than three
//!   quarters of the range).
//!
//! This is not Cassandra's allocator (`allocate_tokens_for_local_replication_factor`
//! optimises the ownership of replicated ranges for one replication factor); it balances
//! primary ownership, which is what it reduces to for SimpleStrategy-like rings. Any tokens
//! work with any strategy: placement never depends on how tokens were chosen.

use crate::error::{Error, Result};
use crate::node::HostId;
use crate::ring::TokenRing;
use cairn_engine::model::Token;

/// Parses `initial_token` (comma-separated Murmur3 tokens).
pub fn parse_initial_tokens(text: &str) -> Result<Vec<Token>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.parse::<i64>() {
            Ok(t) if t != i64::MIN => out.push(Token(t)),
            _ => return Err(Error::InvalidToken(part.to_string())),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `num_tokens` tokens for node `host_id` joining `ring` (which does not hold it yet).
pub fn allocate(ring: &TokenRing, host_id: HostId, num_tokens: usize) -> Vec<Token> {
    if num_tokens == 0 {
        return Vec::new();
    }
    if ring.is_empty() {
        return evenly_spaced(host_id, num_tokens);
    }
    // Ranges as (start, width, owner), widths as unsigned distances on the 2^64 ring; the
    // new node's pieces have no owner (they are never split again).
    let mut ranges: Vec<(u64, u64, Option<usize>)> = ring
        .ranges()
        .into_iter()
        .map(|(r, e)| {
            let start = r.start.0 as u64;
            let width = (r.end.0 as u64).wrapping_sub(start);
            // A single-token ring: the one range is the whole ring.
            (start, if width == 0 { u64::MAX } else { width }, Some(e))
        })
        .collect();
    let mut share: std::collections::HashMap<usize, u128> = std::collections::HashMap::new();
    for (_, w, e) in &ranges {
        if let Some(e) = e {
            *share.entry(*e).or_default() += u128::from(*w);
        }
    }
    let piece = u64::MAX / (share.len() as u64 + 1) / num_tokens as u64;
    let mut out = Vec::with_capacity(num_tokens);
    for _ in 0..num_tokens {
        // The largest range of the node owning the most.
        let Some(k) = (0..ranges.len())
            .filter(|&k| ranges[k].1 >= 4)
            .filter_map(|k| ranges[k].2.map(|e| (k, e)))
            .max_by_key(|&(k, e)| (share[&e], ranges[k].1, std::cmp::Reverse(k)))
            .map(|(k, _)| k)
        else {
            break;
        };
        let (start, width, owner) = ranges[k];
        // Never the whole range: its owner keeps at least a quarter of it.
        let take = piece.clamp(1, width - width / 4);
        let mut token = start.wrapping_add(take) as i64;
        if token == i64::MIN {
            token += 1;
        }
        out.push(Token(token));
        // The new node owns (start, token]; the old owner keeps (token, end].
        ranges[k] = (token as u64, width - take, owner);
        ranges.push((start, take, None));
        if let Some(e) = owner {
            if let Some(s) = share.get_mut(&e) {
                *s -= u128::from(take);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `n` tokens spaced 2^64 / n apart, offset by a value drawn from `host_id`.
fn evenly_spaced(host_id: HostId, n: usize) -> Vec<Token> {
    let step = u64::MAX / n as u64;
    let seed = u64::from_be_bytes(host_id.0[..8].try_into().unwrap_or([0; 8]));
    let offset = if step > 1 { seed % step } else { 0 };
    let mut out: Vec<Token> = (0..n as u64)
        .map(|i| {
            let t = (i64::MIN as u64)
                .wrapping_add(1)
                .wrapping_add(offset)
                .wrapping_add(i.wrapping_mul(step)) as i64;
            Token(if t == i64::MIN { t + 1 } else { t })
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::node::test_endpoint;
    use crate::node::Endpoint;

    /// Grows a ring node by node with `allocate`, returning each step's ownership.
    fn grow(nodes: u8, num_tokens: usize) -> Vec<Vec<f64>> {
        let mut members: Vec<(Endpoint, Vec<Token>)> = Vec::new();
        let mut steps = Vec::new();
        for n in 1..=nodes {
            let ring = TokenRing::new(members.clone()).unwrap();
            let tokens = allocate(&ring, HostId([n; 16]), num_tokens);
            assert_eq!(tokens.len(), num_tokens);
            members.push((test_endpoint(n), tokens));
            steps.push(TokenRing::new(members.clone()).unwrap().primary_ownership());
        }
        steps
    }

    #[test]
    fn initial_tokens_parse_and_refuse_what_is_not_a_token() {
        assert_eq!(
            parse_initial_tokens(" 5, -3 ,5").unwrap(),
            [Token(-3), Token(5)]
        );
        assert!(parse_initial_tokens("1, x").is_err());
        assert!(parse_initial_tokens("-9223372036854775808").is_err());
    }

    #[test]
    fn first_node_spreads_its_tokens_evenly() {
        let t = allocate(&TokenRing::default(), HostId([9; 16]), 16);
        assert_eq!(t.len(), 16);
        let gaps: Vec<u64> = t
            .windows(2)
            .map(|w| (w[1].0 as u64).wrapping_sub(w[0].0 as u64))
            .collect();
        assert!(gaps.iter().all(|g| *g == u64::MAX / 16));
        assert_ne!(t, allocate(&TokenRing::default(), HostId([8; 16]), 16));
    }

    #[test]
    fn joining_nodes_keep_ownership_balanced() {
        for num_tokens in [1, 4, 16, 256] {
            let steps = grow(6, num_tokens);
            for owns in &steps {
                let ideal = 1.0 / owns.len() as f64;
                let total: f64 = owns.iter().sum();
                assert!((total - 1.0).abs() < 1e-9, "{owns:?}");
                // Each node within a factor of two of its fair share at every step; with
                // many tokens much closer.
                let tolerance = if num_tokens >= 16 { 0.35 } else { 1.0 };
                for o in owns {
                    assert!(
                        (o - ideal).abs() <= ideal * tolerance,
                        "num_tokens {num_tokens}: {owns:?}"
                    );
                }
            }
        }
    }
}
