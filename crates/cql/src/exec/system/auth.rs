//! `system_auth`: `roles`, `role_members` and `role_permissions`, served from the role store
//! (`exec::auth`) — the roles of the cluster's schema log — in Cassandra's columns, so a
//! SELECT shows what every node applies. Read-only ([`super::refuse_virtual_write`]).

use super::{boolean, set_text, text, text_set, Row};
use crate::exec::auth::Roles;
use crate::exec::permissions::Permission;
use cairn_engine::model::types::CqlType;

pub(super) fn columns(name: &str) -> Vec<(&'static str, CqlType)> {
    match name {
        "roles" => vec![
            ("role", CqlType::Text),
            ("can_login", CqlType::Boolean),
            ("is_superuser", CqlType::Boolean),
            ("member_of", set_text()),
            ("salted_hash", CqlType::Text),
        ],
        "role_members" => vec![("role", CqlType::Text), ("member", CqlType::Text)],
        "role_permissions" => vec![
            ("role", CqlType::Text),
            ("resource", CqlType::Text),
            ("permissions", set_text()),
        ],
        _ => Vec::new(),
    }
}

/// An empty set is null, as Cassandra reads an empty collection.
fn set(items: Vec<String>) -> Option<bytes::Bytes> {
    if items.is_empty() {
        return None;
    }
    text_set(&items)
}

pub(super) fn rows(roles: &Roles, name: &str) -> Option<Vec<Row>> {
    let all = roles.all();
    Some(match name {
        "roles" => all
            .iter()
            .map(|r| {
                vec![
                    text(&r.name),
                    boolean(r.can_login),
                    boolean(r.is_superuser),
                    set(r.member_of.iter().cloned().collect()),
                    r.salted_hash.as_deref().and_then(text),
                ]
            })
            .collect(),
        "role_members" => {
            let mut pairs: Vec<(&str, &str)> = all
                .iter()
                .flat_map(|m| m.member_of.iter().map(|r| (r.as_str(), m.name.as_str())))
                .collect();
            pairs.sort();
            pairs
                .into_iter()
                .map(|(role, member)| vec![text(role), text(member)])
                .collect()
        }
        "role_permissions" => all
            .iter()
            .flat_map(|r| {
                r.permissions.iter().map(|(res, p)| {
                    vec![
                        text(&r.name),
                        text(res),
                        set(p.iter().map(|p: Permission| p.name().to_string()).collect()),
                    ]
                })
            })
            .collect(),
        _ => return None,
    })
}
