//! The setters of the key table ([`super::keys`]) too long for a line of it, the checks of
//! the security settings, and [`Bad`], what a setter says when it does not take a value.
//!
//! Invariant: a setter changes the configuration only when it returns `Ok`; a security
//! setting Cairn does not enforce is [`Bad::Refused`], never accepted and ignored.

use super::yaml::{Node, Value};
use super::{Authenticator, Authorizer, CommitlogSync, Config};
use cairn_engine::{CommitFailurePolicy, DiskFailurePolicy};

/// Why a value was not taken.
pub(super) enum Bad {
    /// The value is malformed or out of range: the message says how.
    Invalid(String),
    /// A security setting Cairn does not enforce: what was asked (`` `LDAPRoleManager` ``).
    Refused(String),
}

impl From<String> for Bad {
    fn from(message: String) -> Self {
        Bad::Invalid(message)
    }
}

impl From<&str> for Bad {
    fn from(message: &str) -> Self {
        Bad::Invalid(message.to_string())
    }
}

/// The error for a security setting Cairn does not implement: what was asked, that the node
/// refuses to start rather than run without it, and what is supported.
pub(super) fn refused(supported: &str, what: &str) -> String {
    format!(
        "{what} is a security setting Cairn does not implement yet; rather than run without \
         it, Cairn refuses to start. Supported: {supported}"
    )
}

pub(super) fn set_prometheus_prefix(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let s = v.string()?;
    if s.is_empty()
        || !s
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':')
    {
        return Err(Bad::Invalid(format!(
            "`{s}` is not a valid Prometheus metric prefix (letters, digits, _ and :)"
        )));
    }
    c.prometheus_prefix = s;
    Ok(())
}

/// One directory (a list of one, or a single path); `key:` alone clears the list.
pub(super) fn set_data_file_directories(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let dirs = match &v.value {
        Value::Null => Vec::new(),
        Value::Seq(items) => items
            .iter()
            .map(|n| n.path())
            .collect::<Result<Vec<_>, _>>()?,
        Value::Scalar(..) => vec![v.path()?],
        Value::Map(_) => return Err("expected a list of directories".into()),
    };
    if dirs.len() > 1 {
        return Err(Bad::Invalid(format!(
            "{} directories given; Cairn supports one data directory",
            dirs.len()
        )));
    }
    c.data_file_directories = dirs;
    Ok(())
}

pub(super) fn set_commitlog_sync(c: &mut Config, v: &Node) -> Result<(), Bad> {
    c.commitlog_sync = match v.string()?.as_str() {
        "periodic" => CommitlogSync::Periodic,
        "batch" | "group" => CommitlogSync::Batch,
        other => {
            return Err(Bad::Invalid(format!(
                "`{other}` is not a commitlog_sync mode (periodic, batch or group)"
            )))
        }
    };
    Ok(())
}

pub(super) fn set_disk_access_mode(c: &mut Config, v: &Node) -> Result<(), Bad> {
    c.map_sequential_reads = match v.string()?.as_str() {
        "auto" | "mmap" => true,
        "standard" | "mmap_index_only" => false,
        other => {
            return Err(Bad::Invalid(format!(
                "`{other}` is not a disk_access_mode (auto, mmap, mmap_index_only or standard)"
            )))
        }
    };
    Ok(())
}

/// `disk_failure_policy`: one of Cassandra's five.
pub(super) fn set_disk_failure_policy(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let name = v.string()?;
    c.disk_failure_policy = DiskFailurePolicy::from_name(&name).ok_or_else(|| {
        format!("`{name}` is not a disk_failure_policy (stop, stop_paranoid, best_effort, ignore or die)")
    })?;
    Ok(())
}

/// `commit_failure_policy`: one of Cassandra's four.
pub(super) fn set_commit_failure_policy(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let name = v.string()?;
    c.commit_failure_policy = CommitFailurePolicy::from_name(&name).ok_or_else(|| {
        format!("`{name}` is not a commit_failure_policy (stop, stop_commit, ignore or die)")
    })?;
    Ok(())
}

/// A fraction of the memtable space in (0, 1].
pub(super) fn set_memtable_cleanup_threshold(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let t = v.float()?;
    if !(t > 0.0 && t <= 1.0) {
        return Err(Bad::Invalid(format!("must be in (0, 1], not {t}")));
    }
    c.memtable_cleanup_threshold = Some(t);
    Ok(())
}

/// `index_cache_fraction` (ScyllaDB's key): the share of the row cache's budget sstable index
/// pages may take, in [0, 1] (0: no index pages cached).
pub(super) fn set_index_cache_fraction(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let f = v.float()?;
    if !(0.0..=1.0).contains(&f) {
        return Err(Bad::Invalid(format!("must be in [0, 1], not {f}")));
    }
    c.index_cache_fraction = f;
    Ok(())
}

/// A snapshot before every compaction is a debugging aid of Cassandra's that Cairn does not
/// implement; its default, false, is accepted so existing files start.
pub(super) fn set_snapshot_before_compaction(_: &mut Config, v: &Node) -> Result<(), Bad> {
    if v.boolean()? {
        return Err(
            "snapshot_before_compaction: true is not supported (take snapshots with `nodetool snapshot`)"
                .into(),
        );
    }
    Ok(())
}

pub(super) fn set_authenticator(c: &mut Config, v: &Node) -> Result<(), Bad> {
    c.authenticator = match class_name(v)?.as_str() {
        "AllowAllAuthenticator" => Authenticator::AllowAll,
        "PasswordAuthenticator" => Authenticator::Password,
        other => return Err(Bad::Refused(format!("`{other}`"))),
    };
    Ok(())
}

pub(super) fn set_authorizer(c: &mut Config, v: &Node) -> Result<(), Bad> {
    c.authorizer = match class_name(v)?.as_str() {
        "AllowAllAuthorizer" => Authorizer::AllowAll,
        "CassandraAuthorizer" => Authorizer::Cassandra,
        other => return Err(Bad::Refused(format!("`{other}`"))),
    };
    Ok(())
}

/// Comma-separated Murmur3 tokens.
pub(super) fn set_initial_token(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let s = v.string()?;
    for t in s.split(',') {
        if t.trim().parse::<i64>().is_err() {
            return Err(Bad::Invalid(format!(
                "`{}` is not a Murmur3 token (a signed 64-bit integer)",
                t.trim()
            )));
        }
    }
    c.initial_token = Some(s);
    Ok(())
}

pub(super) fn set_endpoint_snitch(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let s = v.string()?;
    if s.is_empty() {
        return Err("empty snitch class name".into());
    }
    if let Some(why) = cairn_cluster::snitch::unsupported(&s) {
        return Err(Bad::Invalid(why));
    }
    c.endpoint_snitch = s;
    Ok(())
}

/// `seed_provider`: a list of one `SimpleSeedProvider` (short or full class name) whose
/// `parameters` hold `seeds`, comma-separated addresses (a port after `:` is accepted and
/// ignored: every node uses the same `storage_port`). Other providers are refused: Cairn
/// would otherwise start without finding its ring.
pub(super) fn set_seed_provider(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let providers = match &v.value {
        // `seed_provider: []`: none, as with no key.
        Value::Seq(items) if items.is_empty() => {
            c.seeds.clear();
            return Ok(());
        }
        Value::Seq(items) => items.as_slice(),
        Value::Map(_) => std::slice::from_ref(v),
        _ => return Err("expected a list with one `class_name` and its `parameters`".into()),
    };
    let [provider] = providers else {
        return Err(Bad::Invalid(format!(
            "{} seed providers given; Cairn supports one",
            providers.len()
        )));
    };
    let Value::Map(entries) = &provider.value else {
        return Err("expected `class_name` and `parameters`".into());
    };
    let mut class = None;
    let mut seeds = None;
    for (k, line, n) in entries {
        match k.as_str() {
            "class_name" => class = Some(n.string()?),
            "parameters" => {
                let params = match &n.value {
                    Value::Seq(items) => items.iter().collect::<Vec<_>>(),
                    Value::Map(_) => vec![n],
                    _ => return Err(format!("line {line}: expected `- seeds: \"…\"`").into()),
                };
                for p in params {
                    let Value::Map(ps) = &p.value else {
                        return Err(format!("line {line}: expected `- seeds: \"…\"`").into());
                    };
                    for (pk, pl, pv) in ps {
                        match pk.as_str() {
                            "seeds" => seeds = Some(pv.string()?),
                            other => {
                                return Err(Bad::Invalid(format!(
                                    "line {pl}: unknown parameter `{other}` of SimpleSeedProvider \
                                     (seeds)"
                                )))
                            }
                        }
                    }
                }
            }
            other => return Err(format!("unexpected `{other}` (class_name, parameters)").into()),
        }
    }
    let class = class.ok_or("missing class_name")?;
    if class.rsplit('.').next() != Some("SimpleSeedProvider") {
        return Err(Bad::Invalid(format!(
            "unsupported seed provider `{class}`: Cairn supports \
             org.apache.cassandra.locator.SimpleSeedProvider"
        )));
    }
    let text = seeds.ok_or("SimpleSeedProvider needs `parameters: - seeds: \"…\"`")?;
    let mut list = Vec::new();
    for seed in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        list.push(seed_host(seed).ok_or_else(|| format!("`{seed}` is not a seed address"))?);
    }
    if list.is_empty() {
        return Err("no seeds given".into());
    }
    c.seeds = list;
    Ok(())
}

/// The host of a seed (`127.0.0.1`, `127.0.0.1:7000`, `[::1]:7000`, `::1`, `host`).
fn seed_host(seed: &str) -> Option<String> {
    if seed.parse::<std::net::IpAddr>().is_ok() {
        return Some(seed.to_string());
    }
    if let Ok(sa) = seed.parse::<std::net::SocketAddr>() {
        return Some(sa.ip().to_string());
    }
    let host = match seed.rsplit_once(':') {
        Some((h, port)) if port.parse::<u16>().is_ok() => h,
        Some(_) => return None,
        None => seed,
    };
    (!host.is_empty() && !host.contains(char::is_whitespace)).then(|| host.to_string())
}

/// Only Murmur3, by its short or full class name; stored by its full name.
pub(super) fn set_partitioner(c: &mut Config, v: &Node) -> Result<(), Bad> {
    let s = v.string()?;
    let short = s.rsplit('.').next().unwrap_or(&s);
    if short != "Murmur3Partitioner" {
        return Err(Bad::Invalid(format!(
            "unsupported partitioner `{s}`: Cairn only supports \
             org.apache.cassandra.dht.Murmur3Partitioner"
        )));
    }
    c.partitioner = "org.apache.cassandra.dht.Murmur3Partitioner".into();
    Ok(())
}

/// A security class setting (`role_manager`, …) that must name `supported`.
pub(super) fn require_class(v: &Node, supported: &str) -> Result<(), Bad> {
    let name = class_name(v)?;
    if name == supported {
        return Ok(());
    }
    Err(Bad::Refused(format!("`{name}`")))
}

/// An options mapping (`client_encryption_options`, …) that must enable nothing: its
/// `enabled` and `optional` flags, when present, are false. Its other entries (keystores,
/// ciphers, …) only matter once enabled.
pub(super) fn require_disabled(v: &Node) -> Result<(), Bad> {
    let Value::Map(entries) = &v.value else {
        return Err("expected a mapping (e.g. `enabled: false`)".into());
    };
    for (k, line, n) in entries {
        if matches!(k.as_str(), "enabled" | "optional") && n.boolean()? {
            return Err(Bad::Refused(format!("`{k}: true` (line {line})")));
        }
    }
    Ok(())
}

/// A key whose only supported state is not set (`key:` with no value keeps the default).
pub(super) fn refuse_any_value(_: &mut Config, _: &Node) -> Result<(), Bad> {
    Err(Bad::Refused("a value".into()))
}

/// `permissions_update_interval(_in_ms)`: refused at start. Cassandra's permission cache
/// reloads an entry in the background once it is older than this interval, serving the old
/// one meanwhile, because a grant made elsewhere reaches it only by expiry or reload.
/// Cairn's cache is rebuilt whenever the roles or permissions it was built from change
/// (`cairn_cql::exec::auth`), so a reload would compute what the cache holds: the key would
/// change nothing, and a key that changes nothing is not accepted as if it did.
pub(super) fn refuse_permissions_update_interval(_: &mut Config, _: &Node) -> Result<(), Bad> {
    Err(Bad::Invalid(
        "not supported: Cairn's permission cache is rebuilt whenever roles or permissions \
         change, so there is no background refresh to schedule; remove the key \
         (permissions_validity still bounds how long an entry is kept)"
            .into(),
    ))
}

/// `authenticator: PasswordAuthenticator`, `org.apache.cassandra.auth.PasswordAuthenticator`
/// or Cassandra 5's `{class_name: …, parameters: …}` → the short class name.
fn class_name(v: &Node) -> Result<String, String> {
    let full = match &v.value {
        Value::Map(entries) => {
            let mut name = None;
            for (k, _, n) in entries {
                match k.as_str() {
                    "class_name" => name = Some(n.string()?),
                    "parameters" => {}
                    other => return Err(format!("unexpected `{other}` (class_name, parameters)")),
                }
            }
            name.ok_or("missing class_name")?
        }
        _ => v.string()?,
    };
    Ok(full.rsplit('.').next().unwrap_or(&full).to_string())
}
