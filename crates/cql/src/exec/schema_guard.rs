//! Which keyspaces a schema statement may change: Cassandra's refusals for its system
//! keyspaces (`ClientState.preventSystemKSSchemaModification`, then
//! `AlterSchemaStatement.execute`'s checks of the keyspace name), shared by every schema
//! statement ([`super::ddl`], [`super::create_table`]).

use crate::error::{Error, Result};

/// Cassandra's local system keyspaces (virtual ones included), case-insensitively: no schema
/// change at all.
fn is_local_system(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(lower.as_str(), "system" | "system_schema")
        || super::system::is_virtual_keyspace(&lower)
}

/// Cassandra's replicated system keyspaces: their replication may be altered, nothing else.
fn is_replicated_system(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "system_auth" | "system_traces" | "system_distributed"
    )
}

/// What a schema statement needs (Cassandra's `Permission`).
#[derive(Clone, Copy)]
pub(super) enum Permission {
    Create,
    Alter,
    Drop,
}

/// What it acts on (Cassandra's `DataResource`).
#[derive(Clone, Copy)]
pub(super) enum Resource<'a> {
    Keyspace(&'a str),
    AllTables(&'a str),
    Table(&'a str, &'a str),
}

/// Cassandra's `ClientState.preventSystemKSSchemaModification`: the first check of a schema
/// statement, before the statement looks at anything.
pub(super) fn authorize(keyspace: &str, perm: Permission, resource: Resource<'_>) -> Result<()> {
    if is_local_system(keyspace) {
        return Err(Error::Unauthorized(format!(
            "{keyspace} keyspace is not user-modifiable."
        )));
    }
    if is_replicated_system(keyspace) {
        if matches!((perm, resource), (Permission::Alter, Resource::Keyspace(_))) {
            return Ok(());
        }
        let perm = match perm {
            Permission::Create => "CREATE",
            Permission::Alter => "ALTER",
            Permission::Drop => "DROP",
        };
        let resource = match resource {
            Resource::Keyspace(ks) => format!("<keyspace {ks}>"),
            Resource::AllTables(ks) => format!("<all tables in {ks}>"),
            Resource::Table(ks, t) => format!("<table {ks}.{t}>"),
        };
        return Err(Error::Unauthorized(format!("Cannot {perm} {resource}")));
    }
    Ok(())
}

/// Cassandra's checks of the keyspace a schema statement changes, after authorization
/// (`AlterSchemaStatement.execute`): not a system keyspace, a valid name.
pub(super) fn check_schema_keyspace(name: &str) -> Result<()> {
    if is_local_system(name) {
        return Err(Error::Invalid(format!(
            "System keyspace '{name}' is not user-modifiable"
        )));
    }
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(Error::Invalid(format!(
            "Keyspace name must not be empty and must contain alphanumeric or underscore characters only (got \"{name}\")"
        )));
    }
    if name.chars().count() > MAX_KEYSPACE_NAME {
        return Err(Error::Invalid(format!(
            "Keyspace name must not be more than {MAX_KEYSPACE_NAME} characters long (got {} characters for \"{name}\")",
            name.chars().count()
        )));
    }
    Ok(())
}

/// Cassandra's `SchemaConstants.NAME_LENGTH`.
const MAX_KEYSPACE_NAME: usize = 48;
