//! Who a node is: its host id, address, data center and rack.

use std::fmt;
use std::net::IpAddr;

/// A node's host id: a UUID made once, on the node's first start, and never changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(pub [u8; 16]);

impl HostId {
    /// A host id from its UUID text (`9a4f…-…`).
    pub fn parse(text: &str) -> Option<HostId> {
        uuid::Uuid::parse_str(text)
            .ok()
            .map(|u| HostId(*u.as_bytes()))
    }
}

impl fmt::Display for HostId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", uuid::Uuid::from_bytes(self.0).hyphenated())
    }
}

/// A node of the ring as placement sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host id.
    pub host_id: HostId,
    /// The address other nodes and clients reach it at (`broadcast_address`).
    pub address: IpAddr,
    /// Data center.
    pub datacenter: String,
    /// Rack.
    pub rack: String,
}

/// An address's bytes as CQL's `inet` holds them (4 or 16).
pub fn ip_bytes(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v) => v.octets().to_vec(),
        IpAddr::V6(v) => v.octets().to_vec(),
    }
}

/// The address whose bytes are `b` ([`ip_bytes`]'s inverse); `None` for a length that is
/// neither 4 nor 16.
pub fn ip_from_bytes(b: &[u8]) -> Option<IpAddr> {
    if let Ok(v4) = <[u8; 4]>::try_from(b) {
        return Some(IpAddr::from(v4));
    }
    <[u8; 16]>::try_from(b).ok().map(IpAddr::from)
}

/// Node `n` of a test ring: host id `[n; 16]`, address `127.0.0.n`, `datacenter1`, `rack1`.
#[cfg(test)]
pub(crate) fn test_endpoint(n: u8) -> Endpoint {
    Endpoint {
        host_id: HostId([n; 16]),
        address: IpAddr::from([127, 0, 0, n]),
        datacenter: "datacenter1".into(),
        rack: "rack1".into(),
    }
}
