//! Roles, their memberships and their permissions as entries of the cluster's schema log
//! (`cairn_cluster::schema_log`), which every node applies — auth in group 0, as ScyllaDB 6
//! has it — so a role or a grant made on one node holds on every node.
//!
//! The entries (keys under [`PREFIX`]):
//! - `auth/format` → `1`: the log holds the roles (written once, by the first node that put
//!   its own roles there — see `Roles::open`);
//! - `auth/role/<name>` → JSON `{"login", "superuser", "hash", "member_of": [role, …],
//!   "permissions": {resource name: [permission, …]}}`: one entry per role, with what it
//!   was granted (roles it is a member of, permissions by Cassandra's resource names).
//!
//! A role's name is the rest of its key (names may hold any character, `/` included).
//! Memberships (`system_auth.role_members`) and permissions (`role_permissions`) are read
//! from the roles that hold them. The schema version drivers compare ignores these entries
//! (it hashes the catalog's definitions only).

use super::permissions::{Permission, PermissionSet};
use cairn_cluster::raft::command::Op;
use std::collections::{BTreeMap, BTreeSet};

/// The prefix of every auth entry.
pub const PREFIX: &str = "auth/";
/// The entry saying the log holds the roles.
pub const FORMAT_KEY: &str = "auth/format";
const ROLE_PREFIX: &str = "auth/role/";

/// A role and what it was granted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Role {
    /// Name.
    pub name: String,
    /// May log in.
    pub can_login: bool,
    /// Superuser.
    pub is_superuser: bool,
    /// bcrypt hash of the password, when one is set.
    pub salted_hash: Option<String>,
    /// The roles granted to it (directly).
    pub member_of: BTreeSet<String>,
    /// Permissions granted to it, by resource name (`data/ks/t`, `roles/r`, …).
    pub permissions: BTreeMap<String, PermissionSet>,
}

/// The entry marking the log as holding the roles.
pub fn format() -> Op {
    Op::Put {
        key: FORMAT_KEY.to_string(),
        value: "1".to_string(),
    }
}

/// Sets a role (with its memberships and permissions).
pub fn put_role(r: &Role) -> Op {
    let perms: BTreeMap<&str, Vec<&str>> = r
        .permissions
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(res, p)| (res.as_str(), p.iter().map(Permission::name).collect()))
        .collect();
    let value = serde_json::json!({
        "login": r.can_login,
        "superuser": r.is_superuser,
        "hash": r.salted_hash,
        "member_of": r.member_of,
        "permissions": perms,
    });
    Op::Put {
        key: format!("{ROLE_PREFIX}{}", r.name),
        value: value.to_string(),
    }
}

/// Removes a role.
pub fn delete_role(name: &str) -> Op {
    Op::Delete {
        key: format!("{ROLE_PREFIX}{name}"),
    }
}

/// The auth entries of a log state's entries.
pub fn of(entries: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    entries
        .range(PREFIX.to_string()..)
        .take_while(|(k, _)| k.starts_with(PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The roles the entries hold; an entry that cannot be read is logged and left out (its
/// role cannot log in until it is written again).
pub fn decode(entries: &BTreeMap<String, String>) -> BTreeMap<String, Role> {
    let mut roles = BTreeMap::new();
    for (key, value) in entries {
        let Some(name) = key.strip_prefix(ROLE_PREFIX) else {
            continue;
        };
        match role_of(name, value) {
            Some(r) => {
                roles.insert(name.to_string(), r);
            }
            None => tracing::error!("auth entry {key} cannot be read: {value}"),
        }
    }
    roles
}

fn role_of(name: &str, value: &str) -> Option<Role> {
    let v: serde_json::Value = serde_json::from_str(value).ok()?;
    let member_of: BTreeSet<String> = serde_json::from_value(v.get("member_of")?.clone()).ok()?;
    let raw: BTreeMap<String, Vec<String>> =
        serde_json::from_value(v.get("permissions")?.clone()).ok()?;
    let mut permissions = BTreeMap::new();
    for (res, names) in raw {
        let mut set = PermissionSet::NONE;
        for n in names {
            // A permission a newer version knows is kept out rather than misread.
            if let Some(p) = Permission::from_name(&n) {
                set.insert(p);
            }
        }
        permissions.insert(res, set);
    }
    Some(Role {
        name: name.to_string(),
        can_login: v.get("login")?.as_bool()?,
        is_superuser: v.get("superuser")?.as_bool()?,
        salted_hash: v.get("hash")?.as_str().map(str::to_string),
        member_of,
        permissions,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_role_comes_back_from_its_entry() {
        let mut r = Role {
            name: "a/b 'c'".into(),
            can_login: true,
            is_superuser: false,
            salted_hash: Some("$2b$10$x".into()),
            ..Role::default()
        };
        r.member_of.insert("reader".into());
        r.permissions.insert(
            "data/ks/t".into(),
            PermissionSet::of(&[Permission::Select, Permission::Modify]),
        );
        let mut entries = BTreeMap::new();
        for op in [format(), put_role(&r)] {
            if let Op::Put { key, value } = op {
                entries.insert(key, value);
            }
        }
        entries.insert("schema/format".into(), "1".into());
        let auth = of(&entries);
        assert_eq!(auth.len(), 2);
        let back = decode(&auth);
        assert_eq!(back.get("a/b 'c'"), Some(&r));
        entries.insert("auth/role/broken".into(), "{".into());
        assert_eq!(decode(&of(&entries)).len(), 1);
    }
}
