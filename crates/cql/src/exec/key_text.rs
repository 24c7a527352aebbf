//! A partition key written as text, as nodetool takes it (`getendpoints ks table key`):
//! Cassandra's `partitionKeyType.fromString`. One column: the column type's string form
//! (`42`, `abc`, a UUID, blob hex without `0x`); several: the components joined by `:`, a
//! literal colon written `\:` (`CompositeType.fromString`).

use crate::error::{Error, Result};
use crate::values::literal::from_string;
use bytes::Bytes;
use cairn_engine::model::token::composite_partition_key;
use cairn_engine::schema::{ColumnKind, TableSchema};

/// The serialized partition key of `schema` that `text` names.
pub fn partition_key_from_text(schema: &TableSchema, text: &str) -> Result<Bytes> {
    let types: Vec<_> = schema
        .columns_of(ColumnKind::PartitionKey)
        .map(|c| c.ty.clone())
        .collect();
    let now = super::catalog::now_micros() / 1000;
    let parts = if types.len() == 1 {
        vec![text.to_string()]
    } else {
        split_components(text)
    };
    if parts.len() != types.len() {
        return Err(Error::Invalid(format!(
            "Invalid key '{text}': {} components for a partition key of {} columns",
            parts.len(),
            types.len()
        )));
    }
    let mut values = Vec::with_capacity(parts.len());
    for (ty, part) in types.iter().zip(&parts) {
        values.push(from_string(ty, part, now).map_err(|e| Error::Invalid(e.to_string()))?);
    }
    let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
    Ok(composite_partition_key(&refs))
}

/// `a:b\:c` → `["a", "b:c"]`.
fn split_components(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                if let Some(s) = out.last_mut() {
                    s.push(':');
                }
            }
            ':' => out.push(String::new()),
            c => {
                if let Some(s) = out.last_mut() {
                    s.push(c);
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use cairn_engine::model::clustering::Order;
    use cairn_engine::model::types::CqlType;

    #[test]
    fn single_and_composite_keys() {
        let mut one = TableSchema::new("ks", "t");
        one.add_column("k", CqlType::Int, ColumnKind::PartitionKey, Order::Asc);
        assert_eq!(
            partition_key_from_text(&one, "42").unwrap().as_ref(),
            &42i32.to_be_bytes()
        );
        assert!(partition_key_from_text(&one, "x").is_err());

        let mut two = TableSchema::new("ks", "t2");
        two.add_column("a", CqlType::Text, ColumnKind::PartitionKey, Order::Asc);
        two.add_column("b", CqlType::Int, ColumnKind::PartitionKey, Order::Asc);
        let k = partition_key_from_text(&two, "x\\:y:7").unwrap();
        assert_eq!(
            k,
            composite_partition_key(&[b"x:y".as_slice(), &7i32.to_be_bytes()])
        );
        let e = partition_key_from_text(&two, "only")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1 components for a partition key of 2 columns"),
            "{e}"
        );
    }
}
