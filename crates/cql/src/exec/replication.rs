//! Keyspace replication: the `replication = {...}` map of CREATE / ALTER KEYSPACE, prepared,
//! validated and shown back as Cassandra 5.0 does it (`ReplicationParams`,
//! `AbstractReplicationStrategy`, `SimpleStrategy`, `NetworkTopologyStrategy`,
//! `ReplicationFactor`), with Cassandra's error texts and client warnings.
//!
//! The steps, in Cassandra's order:
//! 1. the class: short names are qualified with `org.apache.cassandra.locator.`; only
//!    `SimpleStrategy`, `NetworkTopologyStrategy` and `LocalStrategy` exist (the last is refused
//!    by the caller, as it is reserved for internal use);
//! 2. *prepare*: defaults are filled in (`replication_factor` from the previous options or the
//!    default of 1; NetworkTopologyStrategy expands `replication_factor` to every data center
//!    this node knows and drops data centers set to `'0'`). As in Cassandra, a value that fails
//!    to parse here stops the preparation silently (Cassandra ignores exceptions thrown by
//!    `prepareOptions`), leaving the map as far as it got, and the validation reports what
//!    is wrong with it;
//! 3. *validate*: every factor parses (`<replicas>` or `<replicas>/<transient>`, transient
//!    replication being disabled), every option is one the strategy knows — for
//!    NetworkTopologyStrategy, the data centers of the cluster, so an unknown data center is
//!    refused; system_auth must name them all;
//! 4. *warn*: a factor above the number of nodes (one) is accepted with a warning.
//!
//! Invariant of a [`Replication`]: its map holds `class` (fully qualified) and options that
//! passed validation; values are kept as written (`'+1'`, `'1/0'`), as Cassandra keeps them.

use crate::error::{Error, Result};
use cairn_cluster::placement::ReplicationStrategy;
use cairn_engine::java::hash_map_order;

/// Keyspaces every node has; they cannot be created, altered or dropped by users.
pub const SYSTEM_KEYSPACES: [&str; 5] = [
    "system",
    "system_schema",
    "system_auth",
    "system_distributed",
    "system_traces",
];

/// The replication map of a system keyspace: `system` and `system_schema` are local to each
/// node, the others replicated with SimpleStrategy as a fresh Cassandra 5.0 has them:
/// `system_traces` with two replicas (`SYSTEM_TRACES_DEFAULT_RF`), `system_distributed`
/// with three, `system_auth` with one.
pub fn system_replication(name: &str) -> Vec<(String, String)> {
    let rf = match name {
        "system" | "system_schema" => {
            let local = "org.apache.cassandra.locator.LocalStrategy";
            return vec![("class".to_string(), local.to_string())];
        }
        "system_traces" => "2",
        "system_distributed" => "3",
        _ => "1",
    };
    vec![
        (
            "class".to_string(),
            "org.apache.cassandra.locator.SimpleStrategy".to_string(),
        ),
        ("replication_factor".into(), rf.into()),
    ]
}

/// The package Cassandra's strategies live in.
const LOCATOR: &str = "org.apache.cassandra.locator.";
const RF: &str = "replication_factor";
/// `default_keyspace_rf` (Cassandra's default).
const DEFAULT_RF: &str = "1";
/// The data centers of the ring, each with its number of nodes: what NetworkTopologyStrategy
/// accepts and what the replication-factor warnings count.
pub type DataCenters = [(String, usize)];

/// A replication strategy class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Simple,
    NetworkTopology,
    Local,
}

impl Strategy {
    /// Cassandra's simple class name.
    pub fn simple_name(self) -> &'static str {
        match self {
            Strategy::Simple => "SimpleStrategy",
            Strategy::NetworkTopology => "NetworkTopologyStrategy",
            Strategy::Local => "LocalStrategy",
        }
    }

    /// The fully qualified class name, as `system_schema.keyspaces` shows it.
    pub fn class_name(self) -> String {
        format!("{LOCATOR}{}", self.simple_name())
    }

    /// The class a `class` option names (`AbstractReplicationStrategy.getClass`).
    pub fn from_class(name: &str) -> Result<Strategy> {
        let full = if name.contains('.') {
            name.to_string()
        } else {
            format!("{LOCATOR}{name}")
        };
        let short = full.strip_prefix(LOCATOR).unwrap_or("");
        match short {
            "SimpleStrategy" => Ok(Strategy::Simple),
            "NetworkTopologyStrategy" => Ok(Strategy::NetworkTopology),
            "LocalStrategy" => Ok(Strategy::Local),
            "OldNetworkTopologyStrategy" => Err(Error::Configuration(
                "The support for the OldNetworkTopologyStrategy has been removed in C* version 4.0. The keyspace strategy should be switch to NetworkTopologyStrategy".into(),
            )),
            _ => Err(Error::Configuration(format!(
                "Unable to find replication strategy class '{full}'"
            ))),
        }
    }
}

/// A validated replication: the strategy and its options (without `class`), sorted by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replication {
    pub strategy: Strategy,
    pub options: Vec<(String, String)>,
}

impl Replication {
    /// Reads back a stored replication map (`class` and options). Maps stored before
    /// validation existed may name other classes; they are kept as written.
    pub fn from_stored(map: &[(String, String)]) -> Option<Replication> {
        let class = map.iter().find(|(k, _)| k == "class")?;
        let strategy = Strategy::from_class(&class.1).ok()?;
        let mut options: Vec<(String, String)> =
            map.iter().filter(|(k, _)| k != "class").cloned().collect();
        options.sort();
        Some(Replication { strategy, options })
    }

    /// The map `system_schema.keyspaces.replication` shows: `class` and the options, sorted
    /// by key as a CQL map is.
    pub fn to_map(&self) -> Vec<(String, String)> {
        let mut m = self.options.clone();
        m.push(("class".into(), self.strategy.class_name()));
        m.sort();
        m
    }

    /// The placement this replication asks for (what `cairn_cluster::placement` computes
    /// replicas with). Options that are not factors (none pass validation) count as 0.
    pub fn placement(&self) -> ReplicationStrategy {
        let factor = |v: &str| Factor::parse(v).map_or(0, |f| f.all.max(0) as usize);
        match self.strategy {
            Strategy::Local => ReplicationStrategy::Local,
            Strategy::Simple => ReplicationStrategy::Simple {
                replication_factor: self
                    .options
                    .iter()
                    .find(|(k, _)| k == RF)
                    .map_or(0, |(_, v)| factor(v)),
            },
            Strategy::NetworkTopology => ReplicationStrategy::NetworkTopology {
                datacenters: self
                    .options
                    .iter()
                    .map(|(dc, v)| (dc.clone(), factor(v)))
                    .filter(|(_, rf)| *rf > 0)
                    .collect(),
            },
        }
    }

    /// The total number of full replicas (`getReplicationFactor().fullReplicas`).
    fn full_replicas(&self) -> i64 {
        match self.strategy {
            Strategy::Local => 1,
            Strategy::Simple | Strategy::NetworkTopology => self
                .options
                .iter()
                .filter_map(|(_, v)| Factor::parse(v).ok())
                .map(|f| i64::from(f.all))
                .sum(),
        }
    }
}

/// A replication factor, `<replicas>` or `<replicas>/<transient>` (`ReplicationFactor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Factor {
    all: i32,
}

impl Factor {
    /// `ReplicationFactor.fromString`, with transient replication disabled (Cassandra's
    /// default, and Cairn has none). The error is Cassandra's message.
    fn parse(s: &str) -> std::result::Result<Factor, String> {
        let (all, transient) = if s.contains('/') {
            let parts = java_split(s, '/');
            let [all, transient] = parts.as_slice() else {
                return Err(
                    "Replication factor format is <replicas> or <replicas>/<transient>".into(),
                );
            };
            (java_int(all)?, java_int(transient)?)
        } else {
            (java_int(s)?, 0)
        };
        if transient != 0 {
            return Err("Transient replication is not enabled on this node".into());
        }
        if all < 0 {
            return Err(format!(
                "Replication factor must be non-negative, found {all}"
            ));
        }
        Ok(Factor { all })
    }

    /// `toParseableString` (never transient here).
    fn parseable(self) -> String {
        self.all.to_string()
    }
}

/// Java's `String.split(c)`: trailing empty strings are removed.
fn java_split(s: &str, c: char) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(c).collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// Java's `Integer.parseInt` (ASCII digits with an optional sign), with its message.
pub fn java_int(s: &str) -> std::result::Result<i32, String> {
    s.parse::<i32>()
        .map_err(|_| format!("For input string: \"{s}\""))
}

fn get<'a>(m: &'a [(String, String)], key: &str) -> Option<&'a str> {
    m.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn put_if_absent(m: &mut Vec<(String, String)>, key: &str, value: &str) {
    if get(m, key).is_none() {
        m.push((key.to_string(), value.to_string()));
    }
}

/// Fills in defaults (`prepareOptions` of the strategy). `previous` are the keyspace's
/// options before an ALTER (empty for CREATE).
fn prepare(
    strategy: Strategy,
    options: &mut Vec<(String, String)>,
    previous: &[(String, String)],
    data_centers: &DataCenters,
) {
    let previous_rf = get(previous, RF).unwrap_or(DEFAULT_RF).to_string();
    match strategy {
        Strategy::Simple => put_if_absent(options, RF, &previous_rf),
        Strategy::NetworkTopology => {
            // `replication_factor` only when no data center is named; the others get it.
            if options.is_empty() {
                put_if_absent(options, RF, &previous_rf);
            }
            let mut replication = options
                .iter()
                .position(|(k, _)| k == RF)
                .map(|i| options.remove(i).1);
            if replication.is_none() && options.is_empty() {
                // A direct ALTER from SimpleStrategy.
                replication = get(previous, RF).map(str::to_string);
            } else if replication.is_some() {
                // Auto-expansion in an ALTER keeps the data centers' existing factors.
                for (k, v) in previous {
                    if k != RF {
                        put_if_absent(options, k, v);
                    }
                }
            }
            if let Some(r) = replication {
                let Ok(factor) = Factor::parse(&r) else {
                    // Cassandra ignores an exception here and keeps the map as it is.
                    return;
                };
                for (dc, _) in data_centers {
                    put_if_absent(options, dc, &factor.parseable());
                }
            }
            options.retain(|(_, v)| v != "0");
        }
        Strategy::Local => {}
    }
}

/// Checks the prepared options (the strategy's constructor, `validateExpectedOptions`,
/// `validateOptions`) and returns the warnings Cassandra sends (`maybeWarnOnOptions`).
fn validate(
    keyspace: &str,
    strategy: Strategy,
    options: &[(String, String)],
    data_centers: &DataCenters,
    entries: usize,
) -> Result<Vec<String>> {
    // Cassandra looks at the options in the order of its hash map of the given map.
    let keys: Vec<&str> = options.iter().map(|(k, _)| k.as_str()).collect();
    let first_unknown = |known: &dyn Fn(&str) -> bool| {
        hash_map_order(&keys, entries)
            .into_iter()
            .find(|k| !known(k))
    };
    let config = Error::Configuration;
    let mut warnings = Vec::new();
    let system = SYSTEM_KEYSPACES.contains(&keyspace.to_ascii_lowercase().as_str());
    match strategy {
        Strategy::Simple => {
            let rf = get(options, RF).ok_or_else(|| {
                config("SimpleStrategy requires a replication_factor strategy option.".into())
            })?;
            let factor = Factor::parse(rf).map_err(config)?;
            if let Some(k) = first_unknown(&|k| k == RF) {
                return Err(config(format!(
                    "Unrecognized strategy option {{{k}}} passed to SimpleStrategy for keyspace {keyspace}"
                )));
            }
            let nodes: usize = data_centers.iter().map(|(_, n)| n).sum();
            if !system && usize::try_from(factor.all).unwrap_or(0) > nodes {
                warnings.push(format!(
                    "Your replication factor {} for keyspace {keyspace} is higher than the number of nodes {nodes}",
                    factor.all
                ));
            }
        }
        Strategy::NetworkTopology => {
            let mut factors = Vec::with_capacity(options.len());
            for (dc, v) in options {
                if dc.eq_ignore_ascii_case(RF) {
                    return Err(config(
                        "replication_factor should not appear as an option at construction time for NetworkTopologyStrategy".into(),
                    ));
                }
                factors.push((dc, Factor::parse(v).map_err(config)?));
            }
            if options.is_empty() {
                return Err(config(
                    "Configuration for at least one datacenter must be present".into(),
                ));
            }
            if let Some(k) = first_unknown(&|k| data_centers.iter().any(|(dc, _)| dc == k)) {
                return Err(config(format!(
                    "Unrecognized strategy option {{{k}}} passed to NetworkTopologyStrategy for keyspace {keyspace}"
                )));
            }
            if keyspace.eq_ignore_ascii_case("system_auth") {
                let missing: Vec<&str> = data_centers
                    .iter()
                    .filter(|(dc, _)| get(options, dc).is_none())
                    .map(|(dc, _)| dc.as_str())
                    .collect();
                if !missing.is_empty() {
                    return Err(config(format!(
                        "Following datacenters have active nodes and must be present in replication options for keyspace system_auth: [{}]",
                        missing.join(", ")
                    )));
                }
            }
            if !system {
                for (dc, f) in factors {
                    let nodes = data_centers
                        .iter()
                        .find(|(name, _)| name == dc)
                        .map_or(0, |(_, n)| *n);
                    if usize::try_from(f.all).unwrap_or(0) > nodes {
                        warnings.push(format!(
                            "Your replication factor {} for keyspace {keyspace} is higher than the number of nodes {nodes} for datacenter {dc}",
                            f.all
                        ));
                    }
                }
            }
        }
        Strategy::Local => {}
    }
    Ok(warnings)
}

/// What a keyspace statement's `replication` map becomes, with the warnings to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub replication: Replication,
    pub warnings: Vec<String>,
}

/// The replication of a new keyspace (`replication` given, with a `class`).
pub fn for_new(
    keyspace: &str,
    map: &[(String, String)],
    data_centers: &DataCenters,
) -> Result<Prepared> {
    let (strategy, mut options) = split_class(map)?;
    prepare(strategy, &mut options, &[], data_centers);
    finish(keyspace, strategy, options, data_centers, map.len())
}

/// The replication an ALTER KEYSPACE gives `previous` (`replication` given, with a `class`).
pub fn for_altered(
    keyspace: &str,
    map: &[(String, String)],
    previous: &Replication,
    data_centers: &DataCenters,
) -> Result<Prepared> {
    let (strategy, mut options) = split_class(map)?;
    prepare(strategy, &mut options, &previous.options, data_centers);
    let mut out = finish(keyspace, strategy, options, data_centers, map.len())?;
    if previous.full_replicas() < out.replication.full_replicas() {
        out.warnings.push(
            "When increasing replication factor you need to run a full (-full) repair to distribute the data."
                .into(),
        );
    }
    Ok(out)
}

/// Validates a keyspace's unchanged replication again, as Cassandra does on every ALTER
/// KEYSPACE, for its warnings.
pub fn revalidate(
    keyspace: &str,
    replication: &Replication,
    data_centers: &DataCenters,
) -> Result<Vec<String>> {
    validate(
        keyspace,
        replication.strategy,
        &replication.options,
        data_centers,
        replication.options.len() + 1,
    )
}

fn split_class(map: &[(String, String)]) -> Result<(Strategy, Vec<(String, String)>)> {
    let class = get(map, "class")
        .ok_or_else(|| Error::Configuration("Missing replication strategy class".into()))?;
    let strategy = Strategy::from_class(class)?;
    let options = map.iter().filter(|(k, _)| k != "class").cloned().collect();
    Ok((strategy, options))
}

fn finish(
    keyspace: &str,
    strategy: Strategy,
    mut options: Vec<(String, String)>,
    data_centers: &DataCenters,
    entries: usize,
) -> Result<Prepared> {
    if strategy == Strategy::Local {
        return Err(Error::Invalid(
            "Unable to use given strategy class: LocalStrategy is reserved for internal use."
                .into(),
        ));
    }
    let warnings = validate(keyspace, strategy, &options, data_centers, entries)?;
    options.sort();
    Ok(Prepared {
        replication: Replication { strategy, options },
        warnings,
    })
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

    fn dcs() -> Vec<(String, usize)> {
        vec![("datacenter1".to_string(), 1)]
    }

    fn new(pairs: &[(&str, &str)]) -> Result<Prepared> {
        for_new("ks", &m(pairs), &dcs())
    }

    fn err(pairs: &[(&str, &str)]) -> String {
        new(pairs).unwrap_err().to_string()
    }

    #[test]
    fn simple_strategy_factors() {
        let p = new(&[("class", "SimpleStrategy"), ("replication_factor", "3")]).unwrap();
        assert_eq!(
            p.replication.to_map(),
            m(&[
                ("class", "org.apache.cassandra.locator.SimpleStrategy"),
                ("replication_factor", "3")
            ])
        );
        assert_eq!(
            p.warnings,
            vec!["Your replication factor 3 for keyspace ks is higher than the number of nodes 1"]
        );
        // Defaults to 1; values are kept as written.
        let p = new(&[("class", "SimpleStrategy")]).unwrap();
        assert_eq!(p.replication.options, m(&[("replication_factor", "1")]));
        let p = new(&[("class", "SimpleStrategy"), ("replication_factor", "+1")]).unwrap();
        assert_eq!(p.replication.options, m(&[("replication_factor", "+1")]));
        let p = new(&[("class", "SimpleStrategy"), ("replication_factor", "1/0")]).unwrap();
        assert_eq!(p.replication.options, m(&[("replication_factor", "1/0")]));
        assert!(new(&[("class", "SimpleStrategy"), ("replication_factor", "0")]).is_ok());
    }

    #[test]
    fn bad_factors_have_cassandras_texts() {
        let simple = |rf: &str| err(&[("class", "SimpleStrategy"), ("replication_factor", rf)]);
        assert_eq!(simple("x"), "For input string: \"x\"");
        assert_eq!(simple(""), "For input string: \"\"");
        assert_eq!(simple(" 1"), "For input string: \" 1\"");
        assert_eq!(simple("1.5"), "For input string: \"1.5\"");
        assert_eq!(simple("99999999999"), "For input string: \"99999999999\"");
        assert_eq!(
            simple("-1"),
            "Replication factor must be non-negative, found -1"
        );
        assert_eq!(
            simple("3/1"),
            "Transient replication is not enabled on this node"
        );
        assert_eq!(
            simple("-1/1"),
            "Transient replication is not enabled on this node"
        );
        assert_eq!(
            simple("3/"),
            "Replication factor format is <replicas> or <replicas>/<transient>"
        );
        assert_eq!(
            simple("1/2/3"),
            "Replication factor format is <replicas> or <replicas>/<transient>"
        );
        assert_eq!(simple("/3"), "For input string: \"\"");
        assert_eq!(
            simple("-1/0"),
            "Replication factor must be non-negative, found -1"
        );
    }

    #[test]
    fn classes() {
        assert!(new(&[
            ("class", "org.apache.cassandra.locator.SimpleStrategy"),
            ("replication_factor", "1")
        ])
        .is_ok());
        assert_eq!(
            err(&[("class", "simplestrategy")]),
            "Unable to find replication strategy class 'org.apache.cassandra.locator.simplestrategy'"
        );
        assert_eq!(
            err(&[("class", "com.foo.SimpleStrategy")]),
            "Unable to find replication strategy class 'com.foo.SimpleStrategy'"
        );
        assert_eq!(
            err(&[("class", "EverywhereStrategy")]),
            "Unable to find replication strategy class 'org.apache.cassandra.locator.EverywhereStrategy'"
        );
        assert!(err(&[("class", "OldNetworkTopologyStrategy")]).starts_with("The support for"));
        assert_eq!(
            err(&[("class", "LocalStrategy")]),
            "Unable to use given strategy class: LocalStrategy is reserved for internal use."
        );
        assert_eq!(
            err(&[("replication_factor", "1")]),
            "Missing replication strategy class"
        );
    }

    #[test]
    fn unknown_options() {
        assert_eq!(
            err(&[
                ("class", "SimpleStrategy"),
                ("replication_factor", "1"),
                ("foo", "2")
            ]),
            "Unrecognized strategy option {foo} passed to SimpleStrategy for keyspace ks"
        );
        // A bad factor is reported before an unknown option, as the constructor runs first.
        assert_eq!(
            err(&[
                ("class", "SimpleStrategy"),
                ("replication_factor", "x"),
                ("foo", "2")
            ]),
            "For input string: \"x\""
        );
        assert_eq!(
            err(&[("class", "NetworkTopologyStrategy"), ("dc1", "1")]),
            "Unrecognized strategy option {dc1} passed to NetworkTopologyStrategy for keyspace ks"
        );
        assert_eq!(
            err(&[("class", "NetworkTopologyStrategy"), ("REPLICATION_FACTOR", "1")]),
            "replication_factor should not appear as an option at construction time for NetworkTopologyStrategy"
        );
    }

    #[test]
    fn network_topology_expansion() {
        let nts = |pairs: &[(&str, &str)]| {
            let mut all = vec![("class", "NetworkTopologyStrategy")];
            all.extend_from_slice(pairs);
            new(&all)
        };
        assert_eq!(
            nts(&[]).unwrap().replication.options,
            m(&[("datacenter1", "1")])
        );
        assert_eq!(
            nts(&[("replication_factor", "2/0")])
                .unwrap()
                .replication
                .options,
            m(&[("datacenter1", "2")])
        );
        // An explicit data center wins over the expansion.
        assert_eq!(
            nts(&[("replication_factor", "2"), ("datacenter1", "1")])
                .unwrap()
                .replication
                .options,
            m(&[("datacenter1", "1")])
        );
        // A data center set to 0 is dropped, unknown ones included.
        assert!(nts(&[("datacenter1", "1"), ("dc9", "0")]).is_ok());
        let none = "Configuration for at least one datacenter must be present";
        assert_eq!(nts(&[("datacenter1", "0")]).unwrap_err().to_string(), none);
        assert_eq!(
            nts(&[("replication_factor", "0")]).unwrap_err().to_string(),
            none
        );
        // A factor that fails during preparation leaves the map empty.
        assert_eq!(
            nts(&[("replication_factor", "x")]).unwrap_err().to_string(),
            none
        );
        assert_eq!(
            nts(&[("replication_factor", "3/")])
                .unwrap_err()
                .to_string(),
            none
        );
        assert_eq!(
            nts(&[("datacenter1", "5")]).unwrap().warnings,
            vec!["Your replication factor 5 for keyspace ks is higher than the number of nodes 1 for datacenter datacenter1"]
        );
    }

    #[test]
    fn alter_keeps_previous_factors() {
        let prev = |pairs: &[(&str, &str)]| Replication::from_stored(&m(pairs)).unwrap();
        let alter = |pairs: &[(&str, &str)], p: &Replication| {
            for_altered("ks", &m(pairs), p, &dcs()).unwrap()
        };
        let nts3 = prev(&[
            (
                "class",
                "org.apache.cassandra.locator.NetworkTopologyStrategy",
            ),
            ("datacenter1", "3"),
        ]);
        let out = alter(
            &[
                ("class", "NetworkTopologyStrategy"),
                ("replication_factor", "1"),
            ],
            &nts3,
        );
        assert_eq!(out.replication.options, m(&[("datacenter1", "3")]));
        // From NetworkTopologyStrategy to SimpleStrategy without a factor: the default.
        let out = alter(&[("class", "SimpleStrategy")], &nts3);
        assert_eq!(out.replication.options, m(&[("replication_factor", "1")]));
        let ss2 = prev(&[
            ("class", "org.apache.cassandra.locator.SimpleStrategy"),
            ("replication_factor", "2"),
        ]);
        let out = alter(&[("class", "NetworkTopologyStrategy")], &ss2);
        assert_eq!(out.replication.options, m(&[("datacenter1", "2")]));
        let ss1 = prev(&[
            ("class", "org.apache.cassandra.locator.SimpleStrategy"),
            ("replication_factor", "1"),
        ]);
        let out = alter(
            &[("class", "SimpleStrategy"), ("replication_factor", "2")],
            &ss1,
        );
        assert_eq!(
            out.warnings,
            vec![
                "Your replication factor 2 for keyspace ks is higher than the number of nodes 1",
                "When increasing replication factor you need to run a full (-full) repair to distribute the data."
            ]
        );
    }

    #[test]
    fn system_auth_needs_every_data_center() {
        let p = for_new(
            "system_auth",
            &m(&[("class", "NetworkTopologyStrategy"), ("datacenter1", "3")]),
            &dcs(),
        )
        .unwrap();
        // System keyspaces get no warning.
        assert!(p.warnings.is_empty());
        let two = vec![("datacenter1".to_string(), 1), ("dc2".to_string(), 1)];
        let e = for_new(
            "system_auth",
            &m(&[("class", "NetworkTopologyStrategy"), ("datacenter1", "3")]),
            &two,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Following datacenters have active nodes and must be present in replication options for keyspace system_auth: [dc2]"
        );
    }

    #[test]
    fn warnings_count_the_rings_nodes() {
        let three = vec![("datacenter1".to_string(), 3)];
        let nts = m(&[("class", "NetworkTopologyStrategy"), ("datacenter1", "3")]);
        assert!(for_new("ks", &nts, &three).unwrap().warnings.is_empty());
        let two = vec![("datacenter1".to_string(), 1), ("dc2".to_string(), 1)];
        let simple = m(&[("class", "SimpleStrategy"), ("replication_factor", "3")]);
        assert_eq!(
            for_new("ks", &simple, &two).unwrap().warnings,
            vec!["Your replication factor 3 for keyspace ks is higher than the number of nodes 2"]
        );
    }
}
