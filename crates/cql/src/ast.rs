//! The typed syntax tree the parser produces.
//!
//! The tree records what the text says and nothing more: names are normalised (unquoted
//! identifiers lowercased, quoted ones kept), literals keep their source text (the
//! executor converts them once it knows the receiving column's type, exactly as Cassandra
//! defers literal interpretation to prepare time), and semantic checks that Cassandra
//! reports as `InvalidRequest` rather than `SyntaxException` (unknown columns, counts of
//! values against columns, a missing primary key…) are left to the executor. Helpers such
//! as [`CreateTable::primary_key`] do the common ones with Cassandra's wording.

use cairn_engine::model::types::CqlType;

/// A possibly keyspace-qualified name (`ks.t` or `t`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QualifiedName {
    /// The keyspace, when written.
    pub keyspace: Option<String>,
    /// The table, type, index or function name.
    pub name: String,
}

impl QualifiedName {
    /// An unqualified name.
    pub fn new(name: impl Into<String>) -> Self {
        QualifiedName {
            keyspace: None,
            name: name.into(),
        }
    }

    /// A keyspace-qualified name.
    pub fn qualified(keyspace: impl Into<String>, name: impl Into<String>) -> Self {
        QualifiedName {
            keyspace: Some(keyspace.into()),
            name: name.into(),
        }
    }
}

impl std::fmt::Display for QualifiedName {
    /// `ks.name` or `name`, unquoted.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.keyspace {
            Some(ks) => write!(f, "{ks}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// One parsed statement with the bind markers it contains.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedStatement {
    /// The statement.
    pub statement: Statement,
    /// Every bind marker in text order; `bind_markers[i].index == i`. Its length is the
    /// bind-variable count a PREPARE result reports.
    pub bind_markers: Vec<BindMarker>,
    /// Byte range of the statement in the parsed text (without the trailing `;`).
    pub span: std::ops::Range<usize>,
}

/// A bind marker: `?` (anonymous) or `:name` (named). Each occurrence is its own
/// variable, numbered from 0 in text order, also when a name repeats (Cassandra does the
/// same: a repeated `:name` gets two slots that drivers fill with the same value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindMarker {
    /// Position among the statement's markers (0-based).
    pub index: usize,
    /// The name of a `:name` marker (normalised like an identifier).
    pub name: Option<String>,
    /// 1-based line of the marker.
    pub line: u32,
    /// 0-based column of the marker.
    pub column: u32,
}

/// Every statement kind the front end understands.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    Use(String),
    CreateKeyspace(CreateKeyspace),
    AlterKeyspace(AlterKeyspace),
    DropKeyspace(DropKeyspace),
    CreateTable(CreateTable),
    AlterTable(AlterTable),
    DropTable(DropTable),
    Truncate(QualifiedName),
    CreateType(CreateType),
    AlterType(AlterType),
    DropType(DropType),
    CreateIndex(CreateIndex),
    DropIndex(DropIndex),
    CreateView(CreateView),
    AlterView(AlterView),
    DropView(DropView),
    Select(Select),
    Insert(Insert),
    Update(Update),
    Delete(Delete),
    Batch(Batch),
    CreateRole(CreateRole),
    AlterRole(AlterRole),
    DropRole(DropRole),
    ListRoles(ListRoles),
    /// Legacy `CREATE USER`, kept apart because its options have their own syntax.
    CreateUser(CreateUser),
    AlterUser(AlterUser),
    DropUser(DropUser),
    ListUsers,
    Grant(PermissionChange),
    Revoke(PermissionChange),
    ListPermissions(ListPermissions),
    /// `GRANT role TO grantee`.
    GrantRole {
        role: String,
        grantee: String,
    },
    /// `REVOKE role FROM revokee`.
    RevokeRole {
        role: String,
        revokee: String,
    },
}

// ---------------------------------------------------------------------------------------
// Types

/// A type as written in CQL. Everything the engine's [`CqlType`] can express is kept as
/// one; the other variants cover what only the schema layer can resolve (user types) or
/// what the engine does not implement (custom classes, vectors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeName {
    /// A native type (`int`, `text`, `counter`…).
    Native(CqlType),
    List(Box<TypeName>),
    Set(Box<TypeName>),
    Map(Box<TypeName>, Box<TypeName>),
    Tuple(Vec<TypeName>),
    Frozen(Box<TypeName>),
    /// `vector<elem, dimension>` (Cassandra 5).
    Vector(Box<TypeName>, u32),
    /// A user-defined type name, resolved against the schema later.
    UserDefined(QualifiedName),
    /// A custom type given as a quoted Java class name (`'org.apache…'`).
    Custom(String),
}

impl TypeName {
    /// The engine type, when this type contains no user type, custom class or vector.
    pub fn to_cql_type(&self) -> Option<CqlType> {
        let boxed = |t: &TypeName| t.to_cql_type().map(Box::new);
        Some(match self {
            TypeName::Native(t) => t.clone(),
            TypeName::List(t) => CqlType::List(boxed(t)?),
            TypeName::Set(t) => CqlType::Set(boxed(t)?),
            TypeName::Map(k, v) => CqlType::Map(boxed(k)?, boxed(v)?),
            TypeName::Tuple(ts) => CqlType::Tuple(
                ts.iter()
                    .map(TypeName::to_cql_type)
                    .collect::<Option<Vec<_>>>()?,
            ),
            TypeName::Frozen(t) => CqlType::Frozen(boxed(t)?),
            TypeName::Vector(..) | TypeName::UserDefined(_) | TypeName::Custom(_) => return None,
        })
    }

    /// Whether a `counter` appears anywhere in the type.
    pub fn contains_counter(&self) -> bool {
        match self {
            TypeName::Native(t) => *t == CqlType::Counter,
            TypeName::List(t) | TypeName::Set(t) | TypeName::Frozen(t) | TypeName::Vector(t, _) => {
                t.contains_counter()
            }
            TypeName::Map(k, v) => k.contains_counter() || v.contains_counter(),
            TypeName::Tuple(ts) => ts.iter().any(TypeName::contains_counter),
            TypeName::UserDefined(_) | TypeName::Custom(_) => false,
        }
    }
}

impl std::fmt::Display for TypeName {
    /// The type in CQL syntax, spelled the way the engine's [`CqlType::name`] spells it
    /// (`map<text, frozen<list<int>>>`), user types by name, custom types quoted.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TypeName::Native(t) => f.write_str(&t.name()),
            TypeName::List(t) => write!(f, "list<{t}>"),
            TypeName::Set(t) => write!(f, "set<{t}>"),
            TypeName::Map(k, v) => write!(f, "map<{k}, {v}>"),
            TypeName::Tuple(ts) => {
                f.write_str("tuple<")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(">")
            }
            TypeName::Frozen(t) => write!(f, "frozen<{t}>"),
            TypeName::Vector(t, n) => write!(f, "vector<{t}, {n}>"),
            TypeName::UserDefined(name) => write!(f, "{name}"),
            TypeName::Custom(class) => write!(f, "'{}'", class.replace('\'', "''")),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Terms

/// A literal constant, kept as source text (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    /// Decimal integer text, with a leading `-` when negative.
    Integer(String),
    /// Float text (`1.5`, `-2e10`, `NaN`, `-Infinity`).
    Float(String),
    /// The unescaped string.
    String(String),
    Boolean(bool),
    /// Uuid text as written.
    Uuid(String),
    /// Blob text as written, including the `0x` prefix.
    Blob(String),
    /// Duration text as written, including a leading `-` when negative.
    Duration(String),
}

impl Literal {
    /// The literal's value as text, the way Cassandra's property maps and `toString`
    /// show it: strings unquoted, everything else as written.
    pub fn text(&self) -> String {
        match self {
            Literal::Integer(s)
            | Literal::Float(s)
            | Literal::String(s)
            | Literal::Uuid(s)
            | Literal::Blob(s)
            | Literal::Duration(s) => s.clone(),
            Literal::Boolean(b) => b.to_string(),
        }
    }
}

/// A value expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Literal(Literal),
    Null,
    Bind(BindMarker),
    /// `[a, b]`
    List(Vec<Term>),
    /// `{a, b}`
    Set(Vec<Term>),
    /// `{k: v, ...}` (non-empty)
    Map(Vec<(Term, Term)>),
    /// `{}`: an empty set or map, decided by the receiver's type.
    EmptyBraces,
    /// `(a, b)`
    Tuple(Vec<Term>),
    /// `{field: value, ...}` user-type literal.
    UserType(Vec<(String, Term)>),
    /// `f(args)`, including `now()`, `token(?)`, `toTimestamp(now())`.
    Function(FunctionCall<Term>),
    /// `(type) term`: a type hint on a literal or bind marker.
    TypeHint(TypeName, Box<Term>),
    /// `a + b`, `a - b`, `a * b`, `a / b`, `a % b` (Cassandra 4's arithmetic on terms).
    Arithmetic(ArithmeticOp, Box<Term>, Box<Term>),
    /// `- a`: a minus apart from its operand (`-1`, written together, is a literal, as
    /// Cassandra's lexer reads it; `- 1` negates the literal `1`).
    Negate(Box<Term>),
}

/// An arithmetic operator of terms and selectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithmeticOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl ArithmeticOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            ArithmeticOp::Add => "+",
            ArithmeticOp::Sub => "-",
            ArithmeticOp::Mul => "*",
            ArithmeticOp::Div => "/",
            ArithmeticOp::Mod => "%",
        }
    }
}

/// A function call: the name (`token` included) and arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall<A> {
    /// The (possibly keyspace-qualified) function name, normalised.
    pub name: QualifiedName,
    /// The arguments.
    pub args: Vec<A>,
}

// ---------------------------------------------------------------------------------------
// WHERE clauses and conditions

/// Comparison operators of relations and conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Eq,
    Neq,
    Lt,
    Lte,
    Gt,
    Gte,
    Contains,
    ContainsKey,
    Like,
}

/// The left-hand side of a relation or an `IF` condition.
#[derive(Debug, Clone, PartialEq)]
pub enum RelationTarget {
    /// `col`
    Column(String),
    /// `col[term]`: a map key or list index.
    Element(String, Term),
    /// `col.field`: a user-type field (conditions, DELETE targets).
    Field(String, String),
    /// `(a, b)`: a multi-column relation on clustering columns.
    Tuple(Vec<String>),
    /// `token(a, b)`
    Token(Vec<String>),
}

/// The right-hand side of `IN`.
#[derive(Debug, Clone, PartialEq)]
pub enum InValues {
    /// `IN (t1, t2)`; for a multi-column target each term is a tuple or a marker.
    Terms(Vec<Term>),
    /// `IN ?`: the whole list is one bind variable.
    Marker(BindMarker),
}

/// One relation of a WHERE clause, or one `IF` condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Relation {
    /// `target op term`
    Compare {
        target: RelationTarget,
        op: Operator,
        value: Term,
    },
    /// `target IN ...`
    In {
        target: RelationTarget,
        values: InValues,
    },
    /// `col IS NOT NULL` (materialized views' WHERE clause).
    IsNotNull(String),
}

// ---------------------------------------------------------------------------------------
// SELECT

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Asc,
    Desc,
}

/// `SELECT ...`
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub table: QualifiedName,
    pub json: bool,
    pub distinct: bool,
    /// `None` for `*`.
    pub selectors: Option<Vec<Selector>>,
    pub where_clause: Vec<Relation>,
    pub group_by: Vec<String>,
    pub order_by: Vec<(String, Order)>,
    pub per_partition_limit: Option<Term>,
    pub limit: Option<Term>,
    pub allow_filtering: bool,
    /// `BYPASS CACHE` (ScyllaDB's extension).
    pub bypass_cache: bool,
}

/// One selected expression and its `AS` alias.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    pub expr: SelectorExpr,
    pub alias: Option<String>,
}

/// What a selector computes.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectorExpr {
    Column(String),
    /// `COUNT(*)` or `COUNT(1)`.
    CountAll,
    /// `WRITETIME(c)`, `WRITETIME(c[k])`, `WRITETIME(c[a..b])`.
    WriteTime(CellRef),
    /// `MAXWRITETIME(c)` (and of an element or slice).
    MaxWriteTime(CellRef),
    /// `TTL(c)` (and of an element or slice).
    Ttl(CellRef),
    /// `f(args)`, including `token(a, b)`, `min(x)`, `count(col)`.
    Function(FunctionCall<SelectorExpr>),
    /// `CAST(expr AS type)`
    Cast(Box<SelectorExpr>, TypeName),
    /// `expr.field`
    Field(Box<SelectorExpr>, String),
    /// `expr[term]`
    Element(Box<SelectorExpr>, Term),
    /// `expr[from..to]` on a collection (either bound may be left out).
    ElementSlice(Box<SelectorExpr>, Option<Term>, Option<Term>),
    /// `a + b`, `a - b`, `a * b`, `a / b`, `a % b` between selectors.
    Arithmetic(ArithmeticOp, Box<SelectorExpr>, Box<SelectorExpr>),
    /// `-a` (`-1`, a minus written right before a number, is the literal `-1`).
    Negate(Box<SelectorExpr>),
    /// `(a, b)`: a tuple of selectors, at least one of them not a constant or marker (a
    /// tuple of constants only is a [`Term::Tuple`]). Its type is the tuple of its
    /// elements' types; a constant in it needs a type of its own or a hint's.
    Tuple(Vec<SelectorExpr>),
    /// `(type) s` on a selector that is not a constant or marker (those are a
    /// [`Term::TypeHint`]): the value as is, typed as the hint when it can be.
    TypeHint(TypeName, Box<SelectorExpr>),
    /// `(a)`: a selector in parentheses. Kept because the parentheses are part of the result
    /// column's name (`(a + b) * 2`), and because Cassandra refuses a top-level `(a)` ("Cannot
    /// infer type for term (a) in selection clause"). Parentheses around constants and
    /// markers only are a [`Term::Tuple`] instead, as a one-element tuple stands for its
    /// element wherever the receiver is not a tuple.
    Parenthesized(Box<SelectorExpr>),
    /// A constant (or other term) selected as is.
    Term(Term),
}

/// The cells `WRITETIME`, `MAXWRITETIME` and `TTL` look at: a column, optionally followed
/// by element and field selections (`m[k]`, `s[a..b]`, `u.f`, `m[1][2]`, `fu.f`).
#[derive(Debug, Clone, PartialEq)]
pub struct CellRef {
    /// The column.
    pub column: String,
    /// The element and field selections after it, in order.
    pub path: Vec<CellStep>,
}

/// One selection after the column of a [`CellRef`].
#[derive(Debug, Clone, PartialEq)]
pub enum CellStep {
    /// `[k]` or `[a..b]`.
    Element(ElementRef),
    /// `.field`.
    Field(String),
}

impl CellRef {
    /// A whole column.
    pub fn column(name: impl Into<String>) -> Self {
        CellRef {
            column: name.into(),
            path: Vec::new(),
        }
    }
}

/// `[key]` or `[from..to]` after a collection column.
#[derive(Debug, Clone, PartialEq)]
pub enum ElementRef {
    /// One element (a map key, a set element, a list index).
    Key(Term),
    /// A range of elements (either bound may be left out).
    Slice(Option<Term>, Option<Term>),
}

// ---------------------------------------------------------------------------------------
// Modifications

/// `USING TTL x AND TIMESTAMP y`
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Using {
    pub ttl: Option<Term>,
    pub timestamp: Option<Term>,
}

/// The `IF` part of a modification.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Conditions {
    #[default]
    None,
    /// `IF EXISTS`
    Exists,
    /// `IF NOT EXISTS`
    NotExists,
    /// `IF cond AND cond ...`
    Columns(Vec<Relation>),
}

/// What an INSERT provides.
#[derive(Debug, Clone, PartialEq)]
pub enum InsertValues {
    /// `(cols) VALUES (terms)`; the counts are not checked here.
    Columns {
        columns: Vec<String>,
        values: Vec<Term>,
    },
    /// `JSON term [DEFAULT NULL | DEFAULT UNSET]`
    Json { json: Term, default_unset: bool },
}

/// `INSERT INTO ...`
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    pub table: QualifiedName,
    pub values: InsertValues,
    pub if_not_exists: bool,
    pub using: Using,
}

/// One `SET` assignment of an UPDATE.
#[derive(Debug, Clone, PartialEq)]
pub enum Assignment {
    /// `c = term`
    Set { column: String, value: Term },
    /// `c[key] = term` (map entry or list index)
    SetElement {
        column: String,
        key: Term,
        value: Term,
    },
    /// `c.field = term`
    SetField {
        column: String,
        field: String,
        value: Term,
    },
    /// `c = c + term` or `c += term` (counter increment, collection append/union)
    Add { column: String, value: Term },
    /// `c = term + c` (list prepend)
    Prepend { column: String, value: Term },
    /// `c = c - term` or `c -= term` (counter decrement, collection removal)
    Subtract { column: String, value: Term },
}

/// `UPDATE ...`
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub table: QualifiedName,
    pub using: Using,
    pub assignments: Vec<Assignment>,
    pub where_clause: Vec<Relation>,
    pub conditions: Conditions,
}

/// `DELETE ...`
#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    pub table: QualifiedName,
    /// Columns (or elements/fields) to delete; empty deletes whole rows.
    pub targets: Vec<RelationTarget>,
    pub using: Using,
    pub where_clause: Vec<Relation>,
    pub conditions: Conditions,
}

/// Kind of batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    Logged,
    Unlogged,
    Counter,
}

/// A statement allowed inside a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchStatement {
    Insert(Insert),
    Update(Update),
    Delete(Delete),
}

/// `BEGIN BATCH ... APPLY BATCH`
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub kind: BatchKind,
    pub using: Using,
    pub statements: Vec<BatchStatement>,
}

// ---------------------------------------------------------------------------------------
// DDL

/// The value of a `WITH name = value` property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropertyValue {
    /// A constant or unreserved keyword, as text (strings unquoted).
    Simple(String),
    /// A map literal `{k: v, ...}` with keys and values as text.
    Map(Vec<(String, String)>),
}

/// `name = value` in a `WITH` clause; names are lowercased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub name: String,
    pub value: PropertyValue,
}

/// `CREATE KEYSPACE`
#[derive(Debug, Clone, PartialEq)]
pub struct CreateKeyspace {
    pub name: String,
    pub if_not_exists: bool,
    pub properties: Vec<Property>,
}

/// `ALTER KEYSPACE`
#[derive(Debug, Clone, PartialEq)]
pub struct AlterKeyspace {
    pub name: String,
    pub if_exists: bool,
    pub properties: Vec<Property>,
}

/// `DROP KEYSPACE`
#[derive(Debug, Clone, PartialEq)]
pub struct DropKeyspace {
    pub name: String,
    pub if_exists: bool,
}

/// A column in `CREATE TABLE` or `ALTER TABLE ADD`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: TypeName,
    pub is_static: bool,
    /// Declared with an inline `PRIMARY KEY`.
    pub primary_key: bool,
    /// `MASKED WITH f(args)` (`MASKED WITH DEFAULT` is `mask_default()`).
    pub mask: Option<FunctionCall<Term>>,
}

/// A `PRIMARY KEY (...)` clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrimaryKey {
    pub partition_key: Vec<String>,
    pub clustering: Vec<String>,
}

/// `CREATE TABLE`
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    pub name: QualifiedName,
    pub if_not_exists: bool,
    pub columns: Vec<ColumnDef>,
    /// The `PRIMARY KEY (...)` clauses, in order (more than one is an error the executor
    /// reports; see [`CreateTable::primary_key`]).
    pub key_clauses: Vec<PrimaryKey>,
    pub clustering_order: Vec<(String, Order)>,
    pub compact_storage: bool,
    pub properties: Vec<Property>,
}

impl CreateTable {
    /// The table's primary key from either an inline `PRIMARY KEY` or the clause, with
    /// Cassandra's `InvalidRequest` messages when there is none or more than one.
    pub fn primary_key(&self) -> std::result::Result<PrimaryKey, String> {
        let inline: Vec<&ColumnDef> = self.columns.iter().filter(|c| c.primary_key).collect();
        match (inline.as_slice(), self.key_clauses.as_slice()) {
            ([col], []) => Ok(PrimaryKey {
                partition_key: vec![col.name.clone()],
                clustering: Vec::new(),
            }),
            ([], [key]) => Ok(key.clone()),
            ([], []) => Err(format!(
                "No PRIMARY KEY specified for table '{}' (exactly one required)",
                self.name.name
            )),
            _ => Err(format!(
                "Multiple PRIMARY KEY specified for table '{}' (exactly one required)",
                self.name.name
            )),
        }
    }
}

/// What an `ALTER TABLE` does.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTableAction {
    /// `ADD [IF NOT EXISTS] col type [STATIC]` or `ADD (c1 t1, c2 t2)`
    Add {
        if_not_exists: bool,
        columns: Vec<ColumnDef>,
    },
    /// `DROP [IF EXISTS] col` or `DROP (c1, c2)` `[USING TIMESTAMP t]`
    Drop {
        if_exists: bool,
        columns: Vec<String>,
        timestamp: Option<Term>,
    },
    /// `DROP COMPACT STORAGE` (Cassandra 3.0.16+/4.x migration aid)
    DropCompactStorage,
    /// `ALTER col TYPE t` (removed in Cassandra 3.10; parsed so it can be refused clearly)
    AlterType { column: String, ty: TypeName },
    /// `ALTER col MASKED WITH f(args)` / `ALTER col DROP MASKED` (`mask: None`).
    Mask {
        column: String,
        mask: Option<FunctionCall<Term>>,
    },
    /// `RENAME [IF EXISTS] a TO b AND c TO d`
    Rename {
        if_exists: bool,
        renames: Vec<(String, String)>,
    },
    /// `WITH prop = value AND ...` (`COMPACT STORAGE` and clustering order are refused
    /// here by the parser, like Cassandra)
    With(Vec<Property>),
}

/// `ALTER TABLE`
#[derive(Debug, Clone, PartialEq)]
pub struct AlterTable {
    pub name: QualifiedName,
    pub if_exists: bool,
    pub action: AlterTableAction,
}

/// `DROP TABLE`
#[derive(Debug, Clone, PartialEq)]
pub struct DropTable {
    pub name: QualifiedName,
    pub if_exists: bool,
}

/// `CREATE TYPE`
#[derive(Debug, Clone, PartialEq)]
pub struct CreateType {
    pub name: QualifiedName,
    pub if_not_exists: bool,
    pub fields: Vec<(String, TypeName)>,
}

/// What an `ALTER TYPE` does.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTypeAction {
    /// `ADD [IF NOT EXISTS] field type`.
    Add {
        field: String,
        ty: TypeName,
        if_not_exists: bool,
    },
    /// `RENAME [IF EXISTS] a TO b AND …`.
    Rename {
        renames: Vec<(String, String)>,
        if_exists: bool,
    },
    /// `ALTER field TYPE type`: parsed as Cassandra parses it, refused as it refuses it.
    Alter { field: String, ty: TypeName },
}

/// `ALTER TYPE [IF EXISTS]`
#[derive(Debug, Clone, PartialEq)]
pub struct AlterType {
    pub name: QualifiedName,
    pub if_exists: bool,
    pub action: AlterTypeAction,
}

/// `DROP TYPE`
#[derive(Debug, Clone, PartialEq)]
pub struct DropType {
    pub name: QualifiedName,
    pub if_exists: bool,
}

/// What a secondary index covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexTarget {
    Column(String),
    Keys(String),
    Values(String),
    Entries(String),
    Full(String),
    /// `(pk, …)`: the partition key of a local index (ScyllaDB's `((pk), v)`).
    PartitionKey(Vec<String>),
}

/// `CREATE [CUSTOM] INDEX`
#[derive(Debug, Clone, PartialEq)]
pub struct CreateIndex {
    /// The index name, when given.
    pub name: Option<String>,
    pub if_not_exists: bool,
    pub table: QualifiedName,
    pub targets: Vec<IndexTarget>,
    /// `USING 'class'` of a custom index.
    pub custom_class: Option<String>,
    pub properties: Vec<Property>,
}

/// `DROP INDEX`
#[derive(Debug, Clone, PartialEq)]
pub struct DropIndex {
    pub name: QualifiedName,
    pub if_exists: bool,
}

/// `CREATE MATERIALIZED VIEW [IF NOT EXISTS] v AS SELECT … FROM t [WHERE …]
/// PRIMARY KEY (…) [WITH …]`
#[derive(Debug, Clone, PartialEq)]
pub struct CreateView {
    pub name: QualifiedName,
    pub if_not_exists: bool,
    pub base: QualifiedName,
    /// `None` for `*`.
    pub selectors: Option<Vec<Selector>>,
    pub where_clause: Vec<Relation>,
    pub key: PrimaryKey,
    pub clustering_order: Vec<(String, Order)>,
    /// `WITH COMPACT STORAGE` (refused, as by Cassandra).
    pub compact_storage: bool,
    pub properties: Vec<Property>,
    /// How many bind markers the statement holds (refused).
    pub bind_markers: usize,
}

/// `ALTER MATERIALIZED VIEW [IF EXISTS] v WITH …`
#[derive(Debug, Clone, PartialEq)]
pub struct AlterView {
    pub name: QualifiedName,
    pub if_exists: bool,
    pub properties: Vec<Property>,
}

/// `DROP MATERIALIZED VIEW [IF EXISTS] v`
#[derive(Debug, Clone, PartialEq)]
pub struct DropView {
    pub name: QualifiedName,
    pub if_exists: bool,
}

// ---------------------------------------------------------------------------------------
// Roles, users and permissions

/// Options of `CREATE ROLE` / `ALTER ROLE`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoleOptions {
    pub password: Option<String>,
    pub hashed_password: Option<String>,
    pub login: Option<bool>,
    pub superuser: Option<bool>,
    pub options: Option<Vec<(String, String)>>,
}

/// `CREATE ROLE`
#[derive(Debug, Clone, PartialEq)]
pub struct CreateRole {
    pub name: String,
    pub if_not_exists: bool,
    pub options: RoleOptions,
}

/// `ALTER ROLE`
#[derive(Debug, Clone, PartialEq)]
pub struct AlterRole {
    pub name: String,
    pub if_exists: bool,
    pub options: RoleOptions,
}

/// `DROP ROLE`
#[derive(Debug, Clone, PartialEq)]
pub struct DropRole {
    pub name: String,
    pub if_exists: bool,
}

/// `LIST ROLES [OF role] [NORECURSIVE]`
#[derive(Debug, Clone, PartialEq)]
pub struct ListRoles {
    pub of: Option<String>,
    pub recursive: bool,
}

/// `CREATE USER name [WITH PASSWORD 'p'] [SUPERUSER | NOSUPERUSER]`
#[derive(Debug, Clone, PartialEq)]
pub struct CreateUser {
    pub name: String,
    pub if_not_exists: bool,
    pub password: Option<String>,
    pub superuser: Option<bool>,
}

/// `ALTER USER`
#[derive(Debug, Clone, PartialEq)]
pub struct AlterUser {
    pub name: String,
    pub if_exists: bool,
    pub password: Option<String>,
    pub superuser: Option<bool>,
}

/// `DROP USER`
#[derive(Debug, Clone, PartialEq)]
pub struct DropUser {
    pub name: String,
    pub if_exists: bool,
}

/// A permission name, in Cassandra's order (`exec::permissions` gives it its meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    Create,
    Alter,
    Drop,
    Select,
    Modify,
    Authorize,
    Describe,
    Execute,
    Unmask,
    SelectMasked,
}

/// What a permission is granted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    AllKeyspaces,
    Keyspace(String),
    Table(QualifiedName),
    AllRoles,
    Role(String),
    /// `ALL FUNCTIONS [IN KEYSPACE ks]`
    AllFunctions(Option<String>),
    /// `FUNCTION ks.f(types)`
    Function(QualifiedName, Vec<TypeName>),
    AllMBeans,
    MBean(String),
}

/// `GRANT perms ON resource TO role` / `REVOKE perms ON resource FROM role`.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionChange {
    /// `None` for `ALL [PERMISSIONS]` (CQL names one permission or all of them).
    pub permission: Option<Permission>,
    pub resource: Resource,
    pub role: String,
}

/// `LIST perms [ON resource] [OF role] [NORECURSIVE]`
#[derive(Debug, Clone, PartialEq)]
pub struct ListPermissions {
    /// `None` for `ALL [PERMISSIONS]` (CQL names one permission or all of them).
    pub permission: Option<Permission>,
    pub resource: Option<Resource>,
    pub of: Option<String>,
    pub recursive: bool,
}
