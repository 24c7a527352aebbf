//! Keyspace look-ups every command that names a keyspace makes first, so an unknown one
//! is refused as nodetool refuses it.

use crate::client::Client;
use crate::error::{bad_use, unexpected, NodetoolError};

pub fn keyspaces(client: &Client) -> Result<Vec<String>, NodetoolError> {
    let v = client.get("/storage_service/keyspaces", &[])?;
    let arr = v.as_array().ok_or_else(|| unexpected("keyspaces", &v))?;
    Ok(arr
        .iter()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect())
}

pub fn check_keyspace(client: &Client, ks: &str) -> Result<(), NodetoolError> {
    if keyspaces(client)?.iter().any(|k| k == ks) {
        Ok(())
    } else {
        Err(bad_use(format!("Keyspace [{ks}] does not exist.")))
    }
}
