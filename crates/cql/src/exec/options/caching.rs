//! The `caching` table option: Cassandra's `CachingParams` — `keys` (`ALL` or `NONE`) and
//! `rows_per_partition` (`ALL`, `NONE` or a count), any case — plus ScyllaDB's `enabled`
//! (`true` or `false`, any case). A map replaces the whole option: a missing `keys` means
//! `NONE`, a missing `rows_per_partition` `NONE`, a missing `enabled` `true`. Shown back as
//! Cassandra shows it (`{'keys': 'ALL', 'rows_per_partition': 'NONE'}`), with
//! `'enabled': 'false'` first when the cache is off, as ScyllaDB shows it.
//!
//! Cairn's row cache is ScyllaDB's: on for every table unless `enabled` is `false`
//! ([`cairn_engine::schema::CACHING_ENABLED`]). `keys` and `rows_per_partition` are kept and
//! shown back for Cassandra's tools, and — as in ScyllaDB — do not limit what is cached: a
//! partition is cached row by row as far as it is read, and the cache's own budget and LRU
//! bound it (`docs/cql.md`, "Caching").

use crate::error::{Error, Result};
use cairn_engine::java::hash_map_order;

/// A table's caching settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caching {
    /// Reads go through the row cache (ScyllaDB's `enabled`).
    pub enabled: bool,
    pub keys: bool,
    /// Rows cached per partition: 0 for none, `i32::MAX` for all.
    pub rows_per_partition: i32,
}

impl Default for Caching {
    fn default() -> Self {
        Caching {
            enabled: true,
            keys: true,
            rows_per_partition: 0,
        }
    }
}

impl Caching {
    /// `CachingParams.fromMap`.
    pub fn from_map(map: &[(String, String)]) -> Result<Caching> {
        let get = |k: &str| {
            map.iter()
                .rfind(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let mut unknown: Vec<&str> = map
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| !matches!(*k, "keys" | "rows_per_partition" | "enabled"))
            .collect();
        let keys = match get("keys") {
            None => false,
            Some(v) if v.eq_ignore_ascii_case("ALL") => true,
            Some(v) if v.eq_ignore_ascii_case("NONE") => false,
            Some(v) => {
                return Err(Error::Configuration(format!(
                    "Invalid value '{v}' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"
                )))
            }
        };
        let enabled = match get("enabled") {
            None => true,
            Some(v) if v.eq_ignore_ascii_case("true") => true,
            Some(v) if v.eq_ignore_ascii_case("false") => false,
            Some(v) => {
                return Err(Error::Configuration(format!(
                    "Invalid value '{v}' for caching sub-option 'enabled': only 'true' and 'false' are allowed"
                )))
            }
        };
        let rows_per_partition = match get("rows_per_partition") {
            None => 0,
            Some(v) if v.eq_ignore_ascii_case("ALL") => i32::MAX,
            Some(v) if v.eq_ignore_ascii_case("NONE") => 0,
            Some(v) if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) => {
                // Cassandra fails here with a server error (NumberFormatException).
                v.parse::<i32>().map_err(|_| {
                    Error::Configuration(format!(
                        "Invalid value '{v}' for caching sub-option 'rows_per_partition': the count must fit in an int"
                    ))
                })?
            }
            Some(v) => {
                return Err(Error::Configuration(format!(
                    "Invalid value '{v}' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed"
                )))
            }
        };
        if !unknown.is_empty() {
            unknown.dedup();
            // Listed in the order of Cassandra's hash map copy of the option map.
            return Err(Error::Configuration(format!(
                "Invalid caching sub-options [{}]: only 'keys' and 'rows_per_partition' are allowed",
                hash_map_order(&unknown, map.len()).join(", ")
            )));
        }
        Ok(Caching {
            enabled,
            keys,
            rows_per_partition,
        })
    }

    /// The `keys` value shown back.
    pub fn keys_str(&self) -> &'static str {
        if self.keys {
            "ALL"
        } else {
            "NONE"
        }
    }

    /// The `rows_per_partition` value shown back.
    pub fn rows_str(&self) -> String {
        match self.rows_per_partition {
            0 => "NONE".into(),
            i32::MAX => "ALL".into(),
            n => n.to_string(),
        }
    }

    /// The map shown back: `enabled` only when off (ScyllaDB), then `keys` and
    /// `rows_per_partition`.
    pub fn to_map(&self) -> Vec<(String, String)> {
        let mut m = Vec::with_capacity(3);
        if !self.enabled {
            m.push(("enabled".to_string(), "false".to_string()));
        }
        m.push(("keys".to_string(), self.keys_str().to_string()));
        m.push(("rows_per_partition".to_string(), self.rows_str()));
        m
    }

    /// Reads the stored values back (`enabled` as the engine reads it, `keys` /
    /// `rows_per_partition` as [`Caching::keys_str`] and [`Caching::rows_str`] wrote them);
    /// defaults for what is missing.
    pub fn from_stored(enabled: bool, keys: Option<&str>, rows: Option<&str>) -> Caching {
        let d = Caching::default();
        Caching {
            enabled,
            keys: keys.map_or(d.keys, |k| k.eq_ignore_ascii_case("ALL")),
            rows_per_partition: match rows {
                None => d.rows_per_partition,
                Some(r) if r.eq_ignore_ascii_case("ALL") => i32::MAX,
                Some(r) => r.parse().unwrap_or(0),
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn m(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_and_defaults() {
        let c = Caching::from_map(&m(&[("keys", "all"), ("rows_per_partition", "10")])).unwrap();
        assert_eq!((c.keys_str(), c.rows_str().as_str()), ("ALL", "10"));
        // A map without `keys` caches no keys, as in Cassandra.
        let c = Caching::from_map(&m(&[("rows_per_partition", "ALL")])).unwrap();
        assert_eq!((c.keys_str(), c.rows_str().as_str()), ("NONE", "ALL"));
        let c = Caching::from_map(&m(&[("rows_per_partition", "0")])).unwrap();
        assert_eq!(c.rows_str(), "NONE");
        assert_eq!(
            Caching::from_stored(true, Some("NONE"), Some("ALL")),
            Caching {
                enabled: true,
                keys: false,
                rows_per_partition: i32::MAX
            }
        );
    }

    #[test]
    fn refused_values() {
        let err = |pairs: &[(&str, &str)]| Caching::from_map(&m(pairs)).unwrap_err().to_string();
        assert_eq!(
            err(&[("keys", "x")]),
            "Invalid value 'x' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"
        );
        assert_eq!(
            err(&[("keys", "all"), ("rows_per_partition", "-1")]),
            "Invalid value '-1' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed"
        );
        assert_eq!(
            err(&[("keys", "all"), ("foo", "1"), ("bar", "2")]),
            "Invalid caching sub-options [bar, foo]: only 'keys' and 'rows_per_partition' are allowed"
        );
        assert_eq!(
            err(&[("enabled", "no")]),
            "Invalid value 'no' for caching sub-option 'enabled': only 'true' and 'false' are allowed"
        );
    }

    #[test]
    fn scylla_enabled_flag() {
        let c = Caching::from_map(&m(&[("enabled", "FALSE")])).unwrap();
        assert!(!c.enabled);
        assert_eq!(
            c.to_map(),
            m(&[
                ("enabled", "false"),
                ("keys", "NONE"),
                ("rows_per_partition", "NONE")
            ])
        );
        let c = Caching::from_map(&m(&[("enabled", "true"), ("keys", "ALL")])).unwrap();
        assert!(c.enabled);
        assert_eq!(
            c.to_map(),
            m(&[("keys", "ALL"), ("rows_per_partition", "NONE")])
        );
    }
}
