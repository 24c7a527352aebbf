//! Column masks — Cassandra 5.0's dynamic data masking (CEP-20) attached to table columns:
//! `CREATE TABLE t (v text MASKED WITH mask_inner(1, 1))`, `MASKED WITH DEFAULT`,
//! `ALTER TABLE t ALTER v MASKED WITH …` / `DROP MASKED`, and what a SELECT shows.
//!
//! A mask is a masking function ([`crate::values::masking`]) partially applied: its first
//! argument is the column's value, the others are constants fixed when the mask is made
//! ([`prepare`], Cassandra's `ColumnMask.Raw.prepare`, with its texts). The engine's schema
//! keeps it ([`cairn_engine::schema::ColumnMask`]: function name, argument types and values),
//! so masks travel through the schema log with the table and survive a restart.
//!
//! Who sees masked values ([`SelectAccess`], Cassandra's `SelectStatement.checkAccess` and
//! `ColumnMask` selectors): a user without `UNMASK` on the table gets every selector reading
//! a masked column computed from the masked value (`Plan::masked` in the selection, which
//! runs [`masking::apply_column_mask`]: plain columns, function
//! arguments, aggregates, JSON); `writetime` and `ttl` are not values and stay clear. Such a
//! user may restrict a masked column in the WHERE clause only with `SELECT_MASKED` (or
//! `UNMASK`). Without authorization (`AllowAllAuthorizer`), and for superusers, every
//! permission is held, so values are clear — as Cassandra's anonymous user sees them.
//!
//! Making masks needs `dynamic_data_masking_enabled` (off by default, as in Cassandra);
//! dropping one does not, and masks already in the schema apply whatever the setting.

use super::session::QueryParams;
use super::Executor;
use crate::ast::{BindMarker, FunctionCall, Relation, RelationTarget, Term, TypeName};
use crate::error::{Error, Result};
use crate::values::aggregate::to_cast_text;
use crate::values::display::term_display;
use crate::values::format::{format_value, quote_string};
use crate::values::functions;
use crate::values::temporal::format_timestamp_iso;
use crate::values::{collection_fns, fit, masking, term_to_bytes, TermValue};
use cairn_engine::model::types::framing::split_tuple;
use cairn_engine::model::types::{unfrozen, CqlType};
use cairn_engine::schema::{ColumnMask, TableSchema};

/// Cassandra's `ColumnMask.DISABLED_ERROR_MESSAGE`.
const DISABLED: &str = "Cannot mask columns because dynamic data masking is not enabled. You can enable it with the dynamic_data_masking_enabled property on cassandra.yaml";

/// Refuses a statement making a mask when masking is off (Cassandra's `ensureEnabled`, in
/// the statement's validation: before the table is looked at).
pub fn check_enabled(ex: &Executor) -> Result<()> {
    if ex.dynamic_data_masking_enabled() {
        Ok(())
    } else {
        Err(Error::Invalid(DISABLED.into()))
    }
}

/// The mask `call` (`mask_inner(1, 1)`, the column's value left out) for column `column` of
/// type `ty`, checked as Cassandra checks it.
pub fn prepare(column: &str, ty: &CqlType, call: &FunctionCall<Term>) -> Result<ColumnMask> {
    let raw = raw_text(call);
    let name = call.name.name.as_str();
    let unable = || {
        Error::Invalid(format!(
            "Unable to find masking function for {column}, no declared function matches the signature {raw}"
        ))
    };
    if call.name.keyspace.as_deref().is_some_and(|k| k != "system") {
        return Err(unable());
    }
    if !masking::is_masking_fn(name) {
        if matches!(name, "min" | "max" | "sum" | "avg" | "count") {
            return Err(Error::Invalid(format!(
                "Aggregate function {raw} cannot be used for masking table columns"
            )));
        }
        let native = functions::signatures(name).is_some()
            || collection_fns::is_collection_fn(name)
            || matches!(
                name,
                "tojson" | "to_json" | "fromjson" | "from_json" | "token"
            );
        return Err(if native {
            Error::Invalid(format!(
                "Not-masking function {raw} cannot be used for masking table columns"
            ))
        } else {
            unable()
        });
    }
    // The column's value as the first argument, shown as Cassandra shows it there: by its
    // type's class name.
    let mut args = vec![column_marker(ty)];
    args.extend(call.args.iter().cloned());
    let full = FunctionCall {
        name: call.name.clone(),
        args,
    };
    let mut names = vec![marshal_class(ty)];
    names.extend(call.args.iter().map(term_display));
    let sig =
        fit::masking_signature(&full, &names, false).map_err(|e| Error::Invalid(e.to_string()))?;
    if unfrozen(&sig.ret) != unfrozen(ty) {
        return Err(Error::Invalid(format!(
            "Masking function {raw} return type is {}. This is different to the type of the masked column {column} of type {}. Masking functions can only be attached to table columns if they return the same data type as the masked column.",
            sig.ret.name(),
            ty.name()
        )));
    }
    let ctx = super::binds::Binds::new(&NO_VALUES);
    let mut values = Vec::with_capacity(call.args.len());
    for (i, (arg, t)) in call.args.iter().zip(sig.args.iter().skip(1)).enumerate() {
        let receiver = format!("arg{}(system.{name})", i + 1);
        let v = match term_to_bytes(arg, t, &receiver, &ctx)
            .map_err(|e| Error::Invalid(e.to_string()))?
        {
            TermValue::Value(b) => Some(b.to_vec()),
            TermValue::Null => None,
            TermValue::Unset => {
                return Err(Error::Invalid(format!(
                    "Invalid unset value for argument in call to function system.{name}"
                )))
            }
        };
        values.push((t.clone(), v));
    }
    Ok(ColumnMask {
        keyspace: "system".into(),
        function: name.to_string(),
        args: values,
    })
}

static NO_VALUES: std::sync::LazyLock<QueryParams> = std::sync::LazyLock::new(QueryParams::default);

/// The mask as written in messages (Cassandra's `ColumnMask.Raw.toString`).
fn raw_text(call: &FunctionCall<Term>) -> String {
    let name = match &call.name.keyspace {
        Some(ks) => format!("{ks}.{}", call.name.name),
        None => call.name.name.clone(),
    };
    let args: Vec<String> = call.args.iter().map(term_display).collect();
    format!("{name}({})", args.join(", "))
}

/// A typed marker standing for the column's value (bound to marker 0 when the mask runs).
fn column_marker(ty: &CqlType) -> Term {
    Term::TypeHint(
        TypeName::Native(ty.clone()),
        Box::new(Term::Bind(BindMarker {
            index: 0,
            name: None,
            line: 0,
            column: 0,
        })),
    )
}

/// The mask as DESCRIBE shows it: `system.mask_inner(1, null)` (Cassandra's
/// `toCQLLiteral`: a timestamp in its ISO form).
pub fn cql(mask: &ColumnMask) -> String {
    let args: Vec<String> = mask
        .args
        .iter()
        .map(|(t, v)| match v {
            Some(v) if *unfrozen(t) == CqlType::Timestamp => match <[u8; 8]>::try_from(&v[..]) {
                Ok(b) => quote_string(&format_timestamp_iso(i64::from_be_bytes(b))),
                Err(_) => format_value(t, v),
            },
            Some(v) => format_value(t, v),
            None => "null".into(),
        })
        .collect();
    format!("{}.{}({})", mask.keyspace, mask.function, args.join(", "))
}

/// An argument's value as `system_schema.column_masks.function_argument_values` shows it
/// (Cassandra's `AbstractType.getString`: Java's `toString` of a scalar, the bytes in hex
/// for a blob or a collection, a tuple's or user type's components joined by `:`; empty for
/// a null).
pub fn argument_text(ty: &CqlType, v: Option<&[u8]>) -> String {
    let Some(v) = v else {
        return String::new();
    };
    let hex = || v.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let components = |types: &[CqlType]| -> Option<String> {
        let parts = split_tuple(v)?;
        let shown: Vec<String> = types
            .iter()
            .zip(parts)
            .map(|(t, p)| match p {
                None => "@".to_string(),
                Some(p) => argument_text(t, Some(p))
                    .replace('\\', "\\\\")
                    .replace(':', "\\:")
                    .replace('@', "\\@"),
            })
            .collect();
        Some(shown.join(":"))
    };
    match unfrozen(ty) {
        CqlType::Blob | CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => hex(),
        CqlType::Tuple(types) => components(types).unwrap_or_else(hex),
        CqlType::Udt(u) => components(&u.field_types).unwrap_or_else(hex),
        t => to_cast_text(t, v).unwrap_or_else(|| format_value(ty, v)),
    }
}

/// A type's name as Cassandra's `asCQL3Type` gives it: a tuple is always frozen.
pub fn type_text(ty: &CqlType) -> String {
    match ty {
        CqlType::Tuple(_) => format!("frozen<{}>", ty.name()),
        _ => ty.name(),
    }
}

/// Cassandra's class name of a type (`org.apache.cassandra.db.marshal.Int32Type`), as its
/// masking refusals name the column's value.
fn marshal_class(ty: &CqlType) -> String {
    use CqlType as T;
    let m = |c: &str| format!("org.apache.cassandra.db.marshal.{c}");
    match ty {
        T::Ascii => m("AsciiType"),
        T::Bigint => m("LongType"),
        T::Blob => m("BytesType"),
        T::Boolean => m("BooleanType"),
        T::Counter => m("CounterColumnType"),
        T::Date => m("SimpleDateType"),
        T::Decimal => m("DecimalType"),
        T::Double => m("DoubleType"),
        T::Duration => m("DurationType"),
        T::Float => m("FloatType"),
        T::Inet => m("InetAddressType"),
        T::Int => m("Int32Type"),
        T::Smallint => m("ShortType"),
        T::Text => m("UTF8Type"),
        T::Time => m("TimeType"),
        T::Timestamp => m("TimestampType"),
        T::Timeuuid => m("TimeUUIDType"),
        T::Tinyint => m("ByteType"),
        T::Uuid => m("UUIDType"),
        T::Varint => m("IntegerType"),
        T::List(e) => format!("{}({})", m("ListType"), marshal_class(e)),
        T::Set(e) => format!("{}({})", m("SetType"), marshal_class(e)),
        T::Map(k, v) => format!(
            "{}({},{})",
            m("MapType"),
            marshal_class(k),
            marshal_class(v)
        ),
        T::Tuple(c) => {
            let parts: Vec<String> = c.iter().map(marshal_class).collect();
            format!("{}({})", m("TupleType"), parts.join(","))
        }
        T::Frozen(inner) => format!("{}({})", m("FrozenType"), marshal_class(inner)),
        T::Udt(u) => format!("{}({})", m("UserType"), quote_string(&u.name)),
    }
}

/// What a session may do with a table's masked columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectAccess {
    /// `UNMASK`: clear values.
    pub unmask: bool,
    /// `SELECT_MASKED` (or `UNMASK`): masked columns in the WHERE clause.
    pub select_masked: bool,
}

/// The columns a WHERE clause restricts (`token(k)` restricts `k`).
fn restricted(where_clause: &[Relation]) -> Vec<&str> {
    let mut out = Vec::new();
    for rel in where_clause {
        let target = match rel {
            Relation::Compare { target, .. } | Relation::In { target, .. } => target,
            Relation::IsNotNull(c) => {
                out.push(c.as_str());
                continue;
            }
        };
        match target {
            RelationTarget::Column(c)
            | RelationTarget::Element(c, _)
            | RelationTarget::Field(c, _) => out.push(c.as_str()),
            RelationTarget::Tuple(cs) | RelationTarget::Token(cs) => {
                out.extend(cs.iter().map(String::as_str))
            }
        }
    }
    out
}

/// Refuses a WHERE clause restricting masked columns to a user with neither `UNMASK` nor
/// `SELECT_MASKED` (Cassandra's text, the columns in the table's order).
pub fn check_restrictions(
    schema: &TableSchema,
    where_clause: &[Relation],
    access: SelectAccess,
    user: &str,
) -> Result<()> {
    if access.select_masked {
        return Ok(());
    }
    let named = restricted(where_clause);
    let masked: Vec<&str> = schema
        .columns
        .iter()
        .filter(|c| c.mask.is_some() && named.contains(&c.name.as_str()))
        .map(|c| c.name.as_str())
        .collect();
    if masked.is_empty() {
        return Ok(());
    }
    Err(Error::Unauthorized(format!(
        "User {user} has no UNMASK nor SELECT_MASKED permission on table {}.{}, cannot query masked columns [{}]",
        schema.keyspace,
        schema.name,
        masked.join(", ")
    )))
}
