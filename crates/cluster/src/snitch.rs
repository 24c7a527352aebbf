//! Where this node is: its data center and rack (Cassandra's snitches).
//!
//! - `SimpleSnitch`: every node in `datacenter1`, `rack1`.
//! - `GossipingPropertyFileSnitch`: `dc` and `rack` from `cassandra-rackdc.properties` beside
//!   the configuration file (Java properties syntax); both must be there, as Cassandra
//!   requires. `prefer_local` is accepted: it chooses between a node's internal and broadcast
//!   addresses, and a Cairn node has one address for both.
//!
//! Other snitches (the cloud ones, `PropertyFileSnitch`) are refused: an operator naming one
//! would otherwise get placement they did not ask for.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// The file GossipingPropertyFileSnitch reads.
pub const RACKDC_FILE: &str = "cassandra-rackdc.properties";

/// This node's location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Data center.
    pub datacenter: String,
    /// Rack.
    pub rack: String,
}

/// Why `endpoint_snitch` cannot name `snitch`; `None` when Cairn has it.
pub fn unsupported(snitch: &str) -> Option<String> {
    match snitch.rsplit('.').next().unwrap_or(snitch) {
        "SimpleSnitch" | "GossipingPropertyFileSnitch" => None,
        other => Some(format!(
            "endpoint_snitch `{snitch}`: Cairn supports SimpleSnitch and \
             GossipingPropertyFileSnitch, not {other}"
        )),
    }
}

/// This node's location by the snitch `endpoint_snitch` names (short or full class name);
/// `config_dir` is where `cassandra-rackdc.properties` is looked for (the configuration
/// file's directory).
pub fn locate(snitch: &str, config_dir: Option<&Path>) -> Result<Location> {
    match snitch.rsplit('.').next().unwrap_or(snitch) {
        "SimpleSnitch" => Ok(Location {
            datacenter: "datacenter1".into(),
            rack: "rack1".into(),
        }),
        "GossipingPropertyFileSnitch" => {
            let dir = config_dir.unwrap_or(Path::new("."));
            let path = dir.join(RACKDC_FILE);
            let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            rackdc(&text).map_err(|message| Error::File { path, message })
        }
        _ => Err(Error::Config(unsupported(snitch).unwrap_or_default())),
    }
}

/// The location a `cassandra-rackdc.properties` text gives.
pub fn rackdc(text: &str) -> std::result::Result<Location, String> {
    let props = properties(text);
    match (props.get("dc"), props.get("rack")) {
        (Some(dc), Some(rack)) if !dc.is_empty() && !rack.is_empty() => {
            if let Some(v) = props.get("prefer_local") {
                if !matches!(v.to_ascii_lowercase().as_str(), "true" | "false") {
                    return Err(format!("prefer_local `{v}` is neither true nor false"));
                }
            }
            Ok(Location {
                datacenter: dc.clone(),
                rack: rack.clone(),
            })
        }
        _ => Err("DC or rack not found in snitch properties (set both `dc` and `rack`)".into()),
    }
}

/// Java properties: `key=value`, `key: value` or `key value` per line, `#` and `!` comments,
/// a trailing backslash continues the line; keys and values trimmed.
fn properties(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    for line in text.lines() {
        let line = line.trim_start();
        if logical.is_empty() && (line.starts_with('#') || line.starts_with('!')) {
            continue;
        }
        if let Some(cont) = line.strip_suffix('\\') {
            logical.push_str(cont);
            continue;
        }
        logical.push_str(line);
        let entry = std::mem::take(&mut logical);
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let split = entry
            .find(|c: char| c == '=' || c == ':' || c.is_whitespace())
            .unwrap_or(entry.len());
        let (key, rest) = entry.split_at(split);
        let rest = rest.trim_start();
        let value = rest
            .strip_prefix('=')
            .or_else(|| rest.strip_prefix(':'))
            .unwrap_or(rest);
        out.insert(key.trim().to_string(), value.trim().to_string());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn rackdc_reads_dc_and_rack() {
        let text = "# where this node is\ndc=DC1\nrack = RAC1\nprefer_local=true\n";
        assert_eq!(
            rackdc(text).unwrap(),
            Location {
                datacenter: "DC1".into(),
                rack: "RAC1".into()
            }
        );
        let colon = "dc: east\n! comment\nrack  r\\\n2\n";
        let l = rackdc(colon).unwrap();
        assert_eq!((l.datacenter.as_str(), l.rack.as_str()), ("east", "r2"));
    }

    #[test]
    fn rackdc_without_dc_or_rack_is_refused() {
        assert!(rackdc("dc=DC1\n")
            .unwrap_err()
            .contains("DC or rack not found"));
        assert!(rackdc("rack=r1\ndc=\n").is_err());
        assert!(rackdc("dc=a\nrack=b\nprefer_local=maybe").is_err());
    }

    #[test]
    fn snitches_by_name() {
        let simple = locate("org.apache.cassandra.locator.SimpleSnitch", None).unwrap();
        assert_eq!(simple.datacenter, "datacenter1");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RACKDC_FILE), "dc=dc2\nrack=rack7\n").unwrap();
        let gp = locate("GossipingPropertyFileSnitch", Some(dir.path())).unwrap();
        assert_eq!((gp.datacenter.as_str(), gp.rack.as_str()), ("dc2", "rack7"));
        let missing = tempfile::tempdir().unwrap();
        let e = locate("GossipingPropertyFileSnitch", Some(missing.path())).unwrap_err();
        assert!(e.to_string().contains(RACKDC_FILE), "{e}");
        let e = locate("Ec2Snitch", None).unwrap_err().to_string();
        assert!(
            e.contains("SimpleSnitch and GossipingPropertyFileSnitch"),
            "{e}"
        );
    }
}
