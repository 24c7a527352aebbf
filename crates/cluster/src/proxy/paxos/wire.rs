//! The Paxos verbs on the wire.
//!
//! Every request starts with the table id (16 bytes LE), the partition key (length-prefixed)
//! and a ballot (16 bytes, [`Ballot::to_bytes`]):
//! - `PAXOS_PREPARE`: nothing more. Answer: `1`, then the accepted and the committed
//!   proposals (each `0`, or `1`, ballot, length-prefixed update) — a promise; or `0` and
//!   the ballot promised before — a rejection.
//! - `PAXOS_PROPOSE`: the update (length-prefixed mutations, `encode_batch`). Answer: one
//!   byte, `1` accepted, `0` rejected.
//! - `PAXOS_COMMIT`: the update. Answer: empty, once applied.

use super::super::read::{bytes, table_id};
use super::ballot::{Ballot, BALLOT_BYTES};
use super::state::{PrepareAnswer, Proposal};
use bytes::Bytes;
use cairn_engine::model::codec::{put_bytes, DecodeResult, Decoder};
use cairn_engine::model::DecoratedKey;

/// A decoded request: table, key, ballot, and the update when the verb carries one.
pub(crate) struct Request {
    pub table: u128,
    pub key: DecoratedKey,
    pub ballot: Ballot,
    pub update: Option<Bytes>,
}

impl Request {
    /// The request's proposal (its ballot and update; an empty update for a prepare).
    pub fn proposal(&self) -> Proposal {
        Proposal {
            ballot: self.ballot,
            update: self.update.clone().unwrap_or_default(),
        }
    }
}

/// A request's body; `update` for PROPOSE and COMMIT.
pub(crate) fn encode_request(
    table: u128,
    key: &DecoratedKey,
    ballot: Ballot,
    update: Option<&Bytes>,
) -> Bytes {
    let extra = update.map_or(0, |u| u.len() + 5);
    let mut out = Vec::with_capacity(40 + key.key.len() + extra);
    out.extend_from_slice(&table.to_le_bytes());
    put_bytes(&mut out, &key.key);
    out.extend_from_slice(&ballot.to_bytes());
    if let Some(u) = update {
        put_bytes(&mut out, u);
    }
    Bytes::from(out)
}

/// A request from its body; `with_update` for PROPOSE and COMMIT.
pub(crate) fn decode_request(body: &Bytes, with_update: bool) -> Result<Request, String> {
    let bad = |e| format!("undecodable Paxos request: {e:?}");
    let mut d = Decoder::from_bytes(body);
    let table = table_id(&mut d).map_err(bad)?;
    let key = DecoratedKey::new(bytes(&mut d).map_err(bad)?);
    let ballot = ballot(&mut d).map_err(bad)?;
    let update = match with_update {
        true => Some(bytes(&mut d).map_err(bad)?),
        false => None,
    };
    Ok(Request {
        table,
        key,
        ballot,
        update,
    })
}

fn ballot(d: &mut Decoder<'_>) -> DecodeResult<Ballot> {
    let raw = d.raw(BALLOT_BYTES)?;
    Ok(Ballot::from_bytes(raw).unwrap_or(Ballot::NONE))
}

/// A prepare's answer.
pub(crate) fn encode_prepare_answer(a: &PrepareAnswer) -> Bytes {
    let mut out = Vec::new();
    match a {
        PrepareAnswer::Promise {
            accepted,
            committed,
        } => {
            out.push(1);
            for p in [accepted, committed] {
                match p {
                    Some(p) => {
                        out.push(1);
                        out.extend_from_slice(&p.ballot.to_bytes());
                        put_bytes(&mut out, &p.update);
                    }
                    None => out.push(0),
                }
            }
        }
        PrepareAnswer::Rejected { promised } => {
            out.push(0);
            out.extend_from_slice(&promised.to_bytes());
        }
    }
    Bytes::from(out)
}

/// A prepare's answer from its body.
pub(crate) fn decode_prepare_answer(body: &Bytes) -> Result<PrepareAnswer, String> {
    let bad = |e| format!("undecodable Paxos promise: {e:?}");
    let mut d = Decoder::from_bytes(body);
    let proposal = |d: &mut Decoder<'_>| -> DecodeResult<Option<Proposal>> {
        Ok(match d.u8()? {
            0 => None,
            _ => Some(Proposal {
                ballot: ballot(d)?,
                update: bytes(d)?,
            }),
        })
    };
    match d.u8().map_err(bad)? {
        0 => Ok(PrepareAnswer::Rejected {
            promised: ballot(&mut d).map_err(bad)?,
        }),
        _ => Ok(PrepareAnswer::Promise {
            accepted: proposal(&mut d).map_err(bad)?,
            committed: proposal(&mut d).map_err(bad)?,
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn key() -> DecoratedKey {
        DecoratedKey::new(Bytes::from_static(b"k1"))
    }

    #[test]
    fn requests_round_trip() {
        let b = Ballot {
            micros: 1_700_000_000_000_001,
            node: 42,
        };
        let update = Bytes::from_static(b"\x01\x02\x03");
        for with in [None, Some(&update)] {
            let body = encode_request(7, &key(), b, with);
            let r = decode_request(&body, with.is_some()).expect("decodes");
            assert_eq!((r.table, &r.key, r.ballot), (7, &key(), b));
            assert_eq!(r.update.as_ref(), with);
        }
        let truncated = encode_request(7, &key(), b, Some(&update)).slice(..20);
        assert!(decode_request(&truncated, true).is_err());
    }

    #[test]
    fn answers_round_trip() {
        let p = |micros, u: &'static [u8]| Proposal {
            ballot: Ballot { micros, node: 1 },
            update: Bytes::from_static(u),
        };
        for a in [
            PrepareAnswer::Rejected {
                promised: Ballot { micros: 5, node: 2 },
            },
            PrepareAnswer::Promise {
                accepted: None,
                committed: None,
            },
            PrepareAnswer::Promise {
                accepted: Some(p(3, b"abc")),
                committed: Some(p(2, b"")),
            },
        ] {
            assert_eq!(decode_prepare_answer(&encode_prepare_answer(&a)), Ok(a));
        }
        assert!(decode_prepare_answer(&Bytes::from_static(b"\x01\x01")).is_err());
    }
}
