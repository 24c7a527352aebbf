//! One test per statement kind: a table of inputs and the `Debug` form of the tree each
//! must produce. The expected trees were read and checked by hand; `Debug` is used so a
//! failure shows the whole difference at once.

use super::check;

#[test]
fn alter_table() {
    check(&[
        (
            r##"ALTER TABLE t ADD c int"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: Add { if_not_exists: false, columns: [ColumnDef { name: "c", ty: Native(Int), is_static: false, primary_key: false, mask: None }] } })"##,
        ),
        (
            r##"ALTER TABLE ks.t ADD c set<text> static"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: Some("ks"), name: "t" }, if_exists: false, action: Add { if_not_exists: false, columns: [ColumnDef { name: "c", ty: Set(Native(Text)), is_static: true, primary_key: false, mask: None }] } })"##,
        ),
        (
            r##"ALTER TABLE t ADD (c1 int, c2 set<text>)"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: Add { if_not_exists: false, columns: [ColumnDef { name: "c1", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "c2", ty: Set(Native(Text)), is_static: false, primary_key: false, mask: None }] } })"##,
        ),
        (
            r##"ALTER TABLE IF EXISTS t ADD IF NOT EXISTS c int"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: true, action: Add { if_not_exists: true, columns: [ColumnDef { name: "c", ty: Native(Int), is_static: false, primary_key: false, mask: None }] } })"##,
        ),
        (
            r##"ALTER TABLE t DROP c"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: Drop { if_exists: false, columns: ["c"], timestamp: None } })"##,
        ),
        (
            r##"ALTER TABLE t DROP (c1, c2) USING TIMESTAMP 12"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: Drop { if_exists: false, columns: ["c1", "c2"], timestamp: Some(Literal(Integer("12"))) } })"##,
        ),
        (
            r##"ALTER TABLE t DROP IF EXISTS c"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: Drop { if_exists: true, columns: ["c"], timestamp: None } })"##,
        ),
        (
            r##"ALTER TABLE t DROP COMPACT STORAGE"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: DropCompactStorage })"##,
        ),
        (
            r##"ALTER TABLE t ALTER c TYPE blob"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: AlterType { column: "c", ty: Native(Blob) } })"##,
        ),
        (
            r##"ALTER TABLE t RENAME a TO b"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: Rename { if_exists: false, renames: [("a", "b")] } })"##,
        ),
        (
            r##"ALTER TABLE t RENAME a TO b AND c TO d"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: Rename { if_exists: false, renames: [("a", "b"), ("c", "d")] } })"##,
        ),
        (
            r##"ALTER TABLE t WITH comment = 'hi' AND default_time_to_live = 0"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: With([Property { name: "comment", value: Simple("hi") }, Property { name: "default_time_to_live", value: Simple("0") }]) })"##,
        ),
        (
            r##"ALTER COLUMNFAMILY t WITH compaction = {'class': 'SizeTieredCompactionStrategy'}"##,
            r##"AlterTable(AlterTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false, action: With([Property { name: "compaction", value: Map([("class", "SizeTieredCompactionStrategy")]) }]) })"##,
        ),
    ]);
}

#[test]
fn batch() {
    check(&[
        (
            r##"BEGIN BATCH INSERT INTO t (a) VALUES (1) APPLY BATCH"##,
            r##"Batch(Batch { kind: Logged, using: Using { ttl: None, timestamp: None }, statements: [Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a"], values: [Literal(Integer("1"))] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })] })"##,
        ),
        (
            r##"BEGIN UNLOGGED BATCH USING TIMESTAMP 5 INSERT INTO t (a) VALUES (?); UPDATE t SET b = ? WHERE a = ?; DELETE FROM t WHERE a = ?; APPLY BATCH;"##,
            r##"Batch(Batch { kind: Unlogged, using: Using { ttl: None, timestamp: Some(Literal(Integer("5"))) }, statements: [Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a"], values: [Bind(BindMarker { index: 0, name: None, line: 1, column: 65 })] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } }), Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Set { column: "b", value: Bind(BindMarker { index: 1, name: None, line: 1, column: 86 }) }], where_clause: [Compare { target: Column("a"), op: Eq, value: Bind(BindMarker { index: 2, name: None, line: 1, column: 98 }) }], conditions: None }), Delete(Delete { table: QualifiedName { keyspace: None, name: "t" }, targets: [], using: Using { ttl: None, timestamp: None }, where_clause: [Compare { target: Column("a"), op: Eq, value: Bind(BindMarker { index: 3, name: None, line: 1, column: 125 }) }], conditions: None })] })"##,
        ),
        (
            r##"begin counter batch update t set c = c + 1 where k = 1; update t set c = c - 1 where k = 2; apply batch"##,
            r##"Batch(Batch { kind: Counter, using: Using { ttl: None, timestamp: None }, statements: [Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Add { column: "c", value: Literal(Integer("1")) }], where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("1")) }], conditions: None }), Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Subtract { column: "c", value: Literal(Integer("1")) }], where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("2")) }], conditions: None })] })"##,
        ),
    ]);
}

#[test]
fn create_table() {
    check(&[
        (
            r##"CREATE TABLE t (k int PRIMARY KEY, v text)"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "k", ty: Native(Int), is_static: false, primary_key: true, mask: None }, ColumnDef { name: "v", ty: Native(Text), is_static: false, primary_key: false, mask: None }], key_clauses: [], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
        (
            r##"CREATE TABLE IF NOT EXISTS ks.test (pk bigint, ck bigint, v blob, PRIMARY KEY(pk, ck)) WITH compression = { }"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: Some("ks"), name: "test" }, if_not_exists: true, columns: [ColumnDef { name: "pk", ty: Native(Bigint), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "ck", ty: Native(Bigint), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "v", ty: Native(Blob), is_static: false, primary_key: false, mask: None }], key_clauses: [PrimaryKey { partition_key: ["pk"], clustering: ["ck"] }], clustering_order: [], compact_storage: false, properties: [Property { name: "compression", value: Map([]) }] })"##,
        ),
        (
            r##"CREATE TABLE t (a int, b int, PRIMARY KEY (a))"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "b", ty: Native(Int), is_static: false, primary_key: false, mask: None }], key_clauses: [PrimaryKey { partition_key: ["a"], clustering: [] }], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
        (
            r##"CREATE TABLE t (a int, b int, PRIMARY KEY ((a)))"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "b", ty: Native(Int), is_static: false, primary_key: false, mask: None }], key_clauses: [PrimaryKey { partition_key: ["a"], clustering: [] }], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
        (
            r##"CREATE TABLE t (a int, b text, c int, d int, e int static, PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c DESC, d ASC)"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "b", ty: Native(Text), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "c", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "d", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "e", ty: Native(Int), is_static: true, primary_key: false, mask: None }], key_clauses: [PrimaryKey { partition_key: ["a", "b"], clustering: ["c", "d"] }], clustering_order: [("c", Desc), ("d", Asc)], compact_storage: false, properties: [] })"##,
        ),
        (
            r##"CREATE COLUMNFAMILY t (a int, b int, PRIMARY KEY (a, b),) WITH COMPACT STORAGE"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "b", ty: Native(Int), is_static: false, primary_key: false, mask: None }], key_clauses: [PrimaryKey { partition_key: ["a"], clustering: ["b"] }], clustering_order: [], compact_storage: true, properties: [] })"##,
        ),
        (
            r##"CREATE TABLE t (a int PRIMARY KEY) WITH gc_grace_seconds = 10 AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'} AND comment = 'it''s' AND bloom_filter_fp_chance = 0.01 AND speculative_retry = '99PERCENTILE' AND compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': 160}"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: true, mask: None }], key_clauses: [], clustering_order: [], compact_storage: false, properties: [Property { name: "gc_grace_seconds", value: Simple("10") }, Property { name: "caching", value: Map([("keys", "ALL"), ("rows_per_partition", "NONE")]) }, Property { name: "comment", value: Simple("it's") }, Property { name: "bloom_filter_fp_chance", value: Simple("0.01") }, Property { name: "speculative_retry", value: Simple("99PERCENTILE") }, Property { name: "compaction", value: Map([("class", "LeveledCompactionStrategy"), ("sstable_size_in_mb", "160")]) }] })"##,
        ),
        (
            r##"CREATE TABLE t (a int PRIMARY KEY) WITH default_time_to_live = -1 AND read_repair = BLOCKING AND cdc = false"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: true, mask: None }], key_clauses: [], clustering_order: [], compact_storage: false, properties: [Property { name: "default_time_to_live", value: Simple("-1") }, Property { name: "read_repair", value: Simple("BLOCKING") }, Property { name: "cdc", value: Simple("false") }] })"##,
        ),
        (
            r##"CREATE TABLE t (key text PRIMARY KEY, value map<text, frozen<list<int>>>, type tuple<int, text>, ttl int, writetime counter, count int, json text, static int, u ks.mytype, c 'org.apache.Foo', v vector<float, 3>)"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "key", ty: Native(Text), is_static: false, primary_key: true, mask: None }, ColumnDef { name: "value", ty: Map(Native(Text), Frozen(List(Native(Int)))), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "type", ty: Tuple([Native(Int), Native(Text)]), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "ttl", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "writetime", ty: Native(Counter), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "count", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "json", ty: Native(Text), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "static", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "u", ty: UserDefined(QualifiedName { keyspace: Some("ks"), name: "mytype" }), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "c", ty: Custom("org.apache.Foo"), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "v", ty: Vector(Native(Float), 3), is_static: false, primary_key: false, mask: None }], key_clauses: [], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
        (
            r##"CREATE TABLE "Quoted" ("Mixed" int PRIMARY KEY, "with""quote" text)"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "Quoted" }, if_not_exists: false, columns: [ColumnDef { name: "Mixed", ty: Native(Int), is_static: false, primary_key: true, mask: None }, ColumnDef { name: "with\"quote", ty: Native(Text), is_static: false, primary_key: false, mask: None }], key_clauses: [], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
        (
            r##"CREATE TABLE t (a int, b int)"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "b", ty: Native(Int), is_static: false, primary_key: false, mask: None }], key_clauses: [], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
        (
            r##"CREATE TABLE t (a int PRIMARY KEY, b int, PRIMARY KEY (b))"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: true, mask: None }, ColumnDef { name: "b", ty: Native(Int), is_static: false, primary_key: false, mask: None }], key_clauses: [PrimaryKey { partition_key: ["b"], clustering: [] }], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
    ]);
}

#[test]
fn delete() {
    check(&[
        (
            r##"DELETE FROM t WHERE k = 1"##,
            r##"Delete(Delete { table: QualifiedName { keyspace: None, name: "t" }, targets: [], using: Using { ttl: None, timestamp: None }, where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("1")) }], conditions: None })"##,
        ),
        (
            r##"DELETE c, m['k'], l[1], u.f FROM ks.t USING TIMESTAMP 123 WHERE a = ? IF EXISTS"##,
            r##"Delete(Delete { table: QualifiedName { keyspace: Some("ks"), name: "t" }, targets: [Column("c"), Element("m", Literal(String("k"))), Element("l", Literal(Integer("1"))), Field("u", "f")], using: Using { ttl: None, timestamp: Some(Literal(Integer("123"))) }, where_clause: [Compare { target: Column("a"), op: Eq, value: Bind(BindMarker { index: 0, name: None, line: 1, column: 68 }) }], conditions: Exists })"##,
        ),
        (
            r##"DELETE FROM t WHERE k = 1 AND c > 2 AND c <= 5"##,
            r##"Delete(Delete { table: QualifiedName { keyspace: None, name: "t" }, targets: [], using: Using { ttl: None, timestamp: None }, where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("1")) }, Compare { target: Column("c"), op: Gt, value: Literal(Integer("2")) }, Compare { target: Column("c"), op: Lte, value: Literal(Integer("5")) }], conditions: None })"##,
        ),
        (
            r##"DELETE v FROM t WHERE k = 1 IF v = 2"##,
            r##"Delete(Delete { table: QualifiedName { keyspace: None, name: "t" }, targets: [Column("v")], using: Using { ttl: None, timestamp: None }, where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("1")) }], conditions: Columns([Compare { target: Column("v"), op: Eq, value: Literal(Integer("2")) }]) })"##,
        ),
    ]);
}

#[test]
fn drop() {
    check(&[
        (
            r##"DROP TABLE t"##,
            r##"DropTable(DropTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false })"##,
        ),
        (
            r##"DROP TABLE IF EXISTS ks.t"##,
            r##"DropTable(DropTable { name: QualifiedName { keyspace: Some("ks"), name: "t" }, if_exists: true })"##,
        ),
        (
            r##"DROP COLUMNFAMILY t"##,
            r##"DropTable(DropTable { name: QualifiedName { keyspace: None, name: "t" }, if_exists: false })"##,
        ),
        (
            r##"TRUNCATE t"##,
            r##"Truncate(QualifiedName { keyspace: None, name: "t" })"##,
        ),
        (
            r##"TRUNCATE TABLE ks.t"##,
            r##"Truncate(QualifiedName { keyspace: Some("ks"), name: "t" })"##,
        ),
        (
            r##"TRUNCATE COLUMNFAMILY t"##,
            r##"Truncate(QualifiedName { keyspace: None, name: "t" })"##,
        ),
    ]);
}

#[test]
fn insert() {
    check(&[
        (
            r##"INSERT INTO t (a, b) VALUES (1, 'x')"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b"], values: [Literal(Integer("1")), Literal(String("x"))] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO ks.t (a, b, c) VALUES (?, ?, ?)"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: Some("ks"), name: "t" }, values: Columns { columns: ["a", "b", "c"], values: [Bind(BindMarker { index: 0, name: None, line: 1, column: 35 }), Bind(BindMarker { index: 1, name: None, line: 1, column: 38 }), Bind(BindMarker { index: 2, name: None, line: 1, column: 41 })] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b, c) VALUES (1, 'x''y', ?) IF NOT EXISTS USING TTL 10 AND TIMESTAMP :ts"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c"], values: [Literal(Integer("1")), Literal(String("x'y")), Bind(BindMarker { index: 0, name: None, line: 1, column: 43 })] }, if_not_exists: true, using: Using { ttl: Some(Literal(Integer("10"))), timestamp: Some(Bind(BindMarker { index: 1, name: Some("ts"), line: 1, column: 87 })) } })"##,
        ),
        (
            r##"INSERT INTO t (a) VALUES (1) USING TIMESTAMP 123 AND TTL ?"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a"], values: [Literal(Integer("1"))] }, if_not_exists: false, using: Using { ttl: Some(Bind(BindMarker { index: 0, name: None, line: 1, column: 57 })), timestamp: Some(Literal(Integer("123"))) } })"##,
        ),
        (
            r##"INSERT INTO t (a, "B") VALUES (now(), toTimestamp(now()))"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "B"], values: [Function(FunctionCall { name: QualifiedName { keyspace: None, name: "now" }, args: [] }), Function(FunctionCall { name: QualifiedName { keyspace: None, name: "totimestamp" }, args: [Function(FunctionCall { name: QualifiedName { keyspace: None, name: "now" }, args: [] })] })] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t JSON '{"a": 1}'"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Json { json: Literal(String("{\"a\": 1}")), default_unset: false }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t JSON ? DEFAULT UNSET"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Json { json: Bind(BindMarker { index: 0, name: None, line: 1, column: 19 }), default_unset: true }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t JSON '{}' DEFAULT NULL IF NOT EXISTS"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Json { json: Literal(String("{}")), default_unset: false }, if_not_exists: true, using: Using { ttl: None, timestamp: None } })"##,
        ),
    ]);
}

#[test]
fn keyspaces() {
    check(&[
        (r##"USE ks;"##, r##"Use("ks")"##),
        (r##"use "MyKs""##, r##"Use("MyKs")"##),
        (r##"USE key"##, r##"Use("key")"##),
        (
            r##"CREATE KEYSPACE IF NOT EXISTS scylla_bench WITH REPLICATION = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1} AND durable_writes = false;"##,
            r##"CreateKeyspace(CreateKeyspace { name: "scylla_bench", if_not_exists: true, properties: [Property { name: "replication", value: Map([("class", "NetworkTopologyStrategy"), ("replication_factor", "1")]) }, Property { name: "durable_writes", value: Simple("false") }] })"##,
        ),
        (
            r##"create schema Ks2 with replication = {'class': 'SimpleStrategy', 'replication_factor': '3'}"##,
            r##"CreateKeyspace(CreateKeyspace { name: "ks2", if_not_exists: false, properties: [Property { name: "replication", value: Map([("class", "SimpleStrategy"), ("replication_factor", "3")]) }] })"##,
        ),
        (
            r##"ALTER KEYSPACE ks WITH durable_writes = true"##,
            r##"AlterKeyspace(AlterKeyspace { name: "ks", if_exists: false, properties: [Property { name: "durable_writes", value: Simple("true") }] })"##,
        ),
        (
            r##"ALTER KEYSPACE IF EXISTS ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}"##,
            r##"AlterKeyspace(AlterKeyspace { name: "ks", if_exists: true, properties: [Property { name: "replication", value: Map([("class", "NetworkTopologyStrategy"), ("dc1", "3")]) }] })"##,
        ),
        (
            r##"DROP KEYSPACE ks"##,
            r##"DropKeyspace(DropKeyspace { name: "ks", if_exists: false })"##,
        ),
        (
            r##"DROP KEYSPACE IF EXISTS "Ks""##,
            r##"DropKeyspace(DropKeyspace { name: "Ks", if_exists: true })"##,
        ),
    ]);
}

#[test]
fn permissions() {
    check(&[
        (
            r##"GRANT SELECT ON KEYSPACE ks TO bob"##,
            r##"Grant(PermissionChange { permission: Some(Select), resource: Keyspace("ks"), role: "bob" })"##,
        ),
        (
            r##"GRANT ALL PERMISSIONS ON ALL KEYSPACES TO bob"##,
            r##"Grant(PermissionChange { permission: None, resource: AllKeyspaces, role: "bob" })"##,
        ),
        (
            r##"GRANT ALL ON TABLE ks.t TO bob"##,
            r##"Grant(PermissionChange { permission: None, resource: Table(QualifiedName { keyspace: Some("ks"), name: "t" }), role: "bob" })"##,
        ),
        (
            r##"GRANT MODIFY PERMISSION ON t TO bob"##,
            r##"Grant(PermissionChange { permission: Some(Modify), resource: Table(QualifiedName { keyspace: None, name: "t" }), role: "bob" })"##,
        ),
        (
            r##"GRANT AUTHORIZE ON ALL ROLES TO bob"##,
            r##"Grant(PermissionChange { permission: Some(Authorize), resource: AllRoles, role: "bob" })"##,
        ),
        (
            r##"GRANT DESCRIBE ON ROLE alice TO bob"##,
            r##"Grant(PermissionChange { permission: Some(Describe), resource: Role("alice"), role: "bob" })"##,
        ),
        (
            r##"GRANT EXECUTE ON ALL FUNCTIONS IN KEYSPACE ks TO bob"##,
            r##"Grant(PermissionChange { permission: Some(Execute), resource: AllFunctions(Some("ks")), role: "bob" })"##,
        ),
        (
            r##"GRANT EXECUTE ON FUNCTION ks.f(int, text) TO bob"##,
            r##"Grant(PermissionChange { permission: Some(Execute), resource: Function(QualifiedName { keyspace: Some("ks"), name: "f" }, [Native(Int), Native(Text)]), role: "bob" })"##,
        ),
        (
            r##"GRANT SELECT ON ALL MBEANS TO bob"##,
            r##"Grant(PermissionChange { permission: Some(Select), resource: AllMBeans, role: "bob" })"##,
        ),
        (
            r##"GRANT CREATE ON ALL FUNCTIONS TO bob"##,
            r##"Grant(PermissionChange { permission: Some(Create), resource: AllFunctions(None), role: "bob" })"##,
        ),
        (
            r##"REVOKE MODIFY ON ks.t FROM bob"##,
            r##"Revoke(PermissionChange { permission: Some(Modify), resource: Table(QualifiedName { keyspace: Some("ks"), name: "t" }), role: "bob" })"##,
        ),
        (
            r##"REVOKE ALL ON KEYSPACE ks FROM bob"##,
            r##"Revoke(PermissionChange { permission: None, resource: Keyspace("ks"), role: "bob" })"##,
        ),
        (
            r##"LIST ALL PERMISSIONS"##,
            r##"ListPermissions(ListPermissions { permission: None, resource: None, of: None, recursive: true })"##,
        ),
        (
            r##"LIST ALL PERMISSIONS OF bob"##,
            r##"ListPermissions(ListPermissions { permission: None, resource: None, of: Some("bob"), recursive: true })"##,
        ),
        (
            r##"LIST SELECT ON TABLE ks.t"##,
            r##"ListPermissions(ListPermissions { permission: Some(Select), resource: Some(Table(QualifiedName { keyspace: Some("ks"), name: "t" })), of: None, recursive: true })"##,
        ),
        (
            r##"LIST ALTER ON KEYSPACE ks OF bob NORECURSIVE"##,
            r##"ListPermissions(ListPermissions { permission: Some(Alter), resource: Some(Keyspace("ks")), of: Some("bob"), recursive: false })"##,
        ),
        (
            r##"GRANT admin TO bob"##,
            r##"GrantRole { role: "admin", grantee: "bob" }"##,
        ),
        (
            r##"REVOKE admin FROM bob"##,
            r##"RevokeRole { role: "admin", revokee: "bob" }"##,
        ),
    ]);
}

#[test]
fn relations() {
    check(&[
        (
            r##"SELECT * FROM t WHERE a = 1 AND b < 2 AND c <= 3 AND d > 4 AND e >= 5 AND f != 6"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Column("a"), op: Eq, value: Literal(Integer("1")) }, Compare { target: Column("b"), op: Lt, value: Literal(Integer("2")) }, Compare { target: Column("c"), op: Lte, value: Literal(Integer("3")) }, Compare { target: Column("d"), op: Gt, value: Literal(Integer("4")) }, Compare { target: Column("e"), op: Gte, value: Literal(Integer("5")) }, Compare { target: Column("f"), op: Neq, value: Literal(Integer("6")) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE a IN (1, 2, 3) AND b IN () AND c IN ? AND d IN :vals"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [In { target: Column("a"), values: Terms([Literal(Integer("1")), Literal(Integer("2")), Literal(Integer("3"))]) }, In { target: Column("b"), values: Terms([]) }, In { target: Column("c"), values: Marker(BindMarker { index: 0, name: None, line: 1, column: 58 }) }, In { target: Column("d"), values: Marker(BindMarker { index: 1, name: Some("vals"), line: 1, column: 69 }) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE s CONTAINS 1 AND m CONTAINS KEY 'k' AND m['k'] = 2 AND t LIKE 'a%'"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Column("s"), op: Contains, value: Literal(Integer("1")) }, Compare { target: Column("m"), op: ContainsKey, value: Literal(String("k")) }, Compare { target: Element("m", Literal(String("k"))), op: Eq, value: Literal(Integer("2")) }, Compare { target: Column("t"), op: Like, value: Literal(String("a%")) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE (c, d) > (1, 2) AND (c, d) <= ?"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Tuple(["c", "d"]), op: Gt, value: Tuple([Literal(Integer("1")), Literal(Integer("2"))]) }, Compare { target: Tuple(["c", "d"]), op: Lte, value: Bind(BindMarker { index: 0, name: None, line: 1, column: 52 }) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE (c, d) IN ((1, 2), (3, 4)) AND (e, f) IN (?, ?) AND (g) IN ?"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [In { target: Tuple(["c", "d"]), values: Terms([Tuple([Literal(Integer("1")), Literal(Integer("2"))]), Tuple([Literal(Integer("3")), Literal(Integer("4"))])]) }, In { target: Tuple(["e", "f"]), values: Terms([Bind(BindMarker { index: 0, name: None, line: 1, column: 64 }), Bind(BindMarker { index: 1, name: None, line: 1, column: 67 })]) }, In { target: Tuple(["g"]), values: Marker(BindMarker { index: 2, name: None, line: 1, column: 81 }) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE token(pk) > token(?) AND token(pk) <= -123"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Token(["pk"]), op: Gt, value: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "token" }, args: [Bind(BindMarker { index: 0, name: None, line: 1, column: 40 })] }) }, Compare { target: Token(["pk"]), op: Lte, value: Literal(Integer("-123")) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE token(a, b) >= token(1, 'x') AND token(a, b) < ?"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Token(["a", "b"]), op: Gte, value: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "token" }, args: [Literal(Integer("1")), Literal(String("x"))] }) }, Compare { target: Token(["a", "b"]), op: Lt, value: Bind(BindMarker { index: 0, name: None, line: 1, column: 69 }) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE v IS NOT NULL"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [IsNotNull("v")], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
    ]);
}

#[test]
fn roles() {
    check(&[
        (
            r##"CREATE ROLE bob"##,
            r##"CreateRole(CreateRole { name: "bob", if_not_exists: false, options: RoleOptions { password: None, hashed_password: None, login: None, superuser: None, options: None } })"##,
        ),
        (
            r##"CREATE ROLE IF NOT EXISTS bob WITH PASSWORD = 'pw' AND LOGIN = true AND SUPERUSER = false"##,
            r##"CreateRole(CreateRole { name: "bob", if_not_exists: true, options: RoleOptions { password: Some("pw"), hashed_password: None, login: Some(true), superuser: Some(false), options: None } })"##,
        ),
        (
            r##"CREATE ROLE 'Bob Smith' WITH OPTIONS = {'a': 'b'} AND HASHED PASSWORD = '$2a$10$x'"##,
            r##"CreateRole(CreateRole { name: "Bob Smith", if_not_exists: false, options: RoleOptions { password: None, hashed_password: Some("$2a$10$x"), login: None, superuser: None, options: Some([("a", "b")]) } })"##,
        ),
        (
            r##"ALTER ROLE bob WITH PASSWORD = 'x'"##,
            r##"AlterRole(AlterRole { name: "bob", if_exists: false, options: RoleOptions { password: Some("x"), hashed_password: None, login: None, superuser: None, options: None } })"##,
        ),
        (
            r##"ALTER ROLE IF EXISTS "Bob" WITH LOGIN = false AND SUPERUSER = true"##,
            r##"AlterRole(AlterRole { name: "Bob", if_exists: true, options: RoleOptions { password: None, hashed_password: None, login: Some(false), superuser: Some(true), options: None } })"##,
        ),
        (
            r##"DROP ROLE bob"##,
            r##"DropRole(DropRole { name: "bob", if_exists: false })"##,
        ),
        (
            r##"DROP ROLE IF EXISTS bob"##,
            r##"DropRole(DropRole { name: "bob", if_exists: true })"##,
        ),
        (
            r##"LIST ROLES"##,
            r##"ListRoles(ListRoles { of: None, recursive: true })"##,
        ),
        (
            r##"LIST ROLES OF bob NORECURSIVE"##,
            r##"ListRoles(ListRoles { of: Some("bob"), recursive: false })"##,
        ),
        (
            r##"CREATE USER alice"##,
            r##"CreateUser(CreateUser { name: "alice", if_not_exists: false, password: None, superuser: None })"##,
        ),
        (
            r##"CREATE USER IF NOT EXISTS 'alice' WITH PASSWORD 'x' SUPERUSER"##,
            r##"CreateUser(CreateUser { name: "alice", if_not_exists: true, password: Some("x"), superuser: Some(true) })"##,
        ),
        (
            r##"ALTER USER alice WITH PASSWORD 'y' NOSUPERUSER"##,
            r##"AlterUser(AlterUser { name: "alice", if_exists: false, password: Some("y"), superuser: Some(false) })"##,
        ),
        (
            r##"DROP USER IF EXISTS alice"##,
            r##"DropUser(DropUser { name: "alice", if_exists: true })"##,
        ),
        (r##"LIST USERS"##, r##"ListUsers"##),
    ]);
}

#[test]
fn select() {
    check(&[
        (
            r##"SELECT * FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM system.local WHERE key='local'"##,
            r##"Select(Select { table: QualifiedName { keyspace: Some("system"), name: "local" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Column("key"), op: Eq, value: Literal(String("local")) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT a, b AS bee, "C" FROM ks.t"##,
            r##"Select(Select { table: QualifiedName { keyspace: Some("ks"), name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: Column("a"), alias: None }, Selector { expr: Column("b"), alias: Some("bee") }, Selector { expr: Column("C"), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT JSON * FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: true, distinct: false, selectors: None, where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT DISTINCT pk FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: true, selectors: Some([Selector { expr: Column("pk"), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT JSON DISTINCT a FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: true, distinct: true, selectors: Some([Selector { expr: Column("a"), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT json, distinct FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: Column("json"), alias: None }, Selector { expr: Column("distinct"), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT json FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: Column("json"), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT COUNT(*) FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: CountAll, alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT count(1) AS n, count(c) FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: CountAll, alias: Some("n") }, Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "count" }, args: [Column("c")] }), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT writetime(c), maxwritetime(c), ttl(c), ttl FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: WriteTime(CellRef { column: "c", path: [] }), alias: None }, Selector { expr: MaxWriteTime(CellRef { column: "c", path: [] }), alias: None }, Selector { expr: Ttl(CellRef { column: "c", path: [] }), alias: None }, Selector { expr: Column("ttl"), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT token(a, b), toTimestamp(now()), ks.myfn(a, 1), "F"(a) FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "token" }, args: [Column("a"), Column("b")] }), alias: None }, Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "totimestamp" }, args: [Function(FunctionCall { name: QualifiedName { keyspace: None, name: "now" }, args: [] })] }), alias: None }, Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: Some("ks"), name: "myfn" }, args: [Column("a"), Term(Literal(Integer("1")))] }), alias: None }, Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "F" }, args: [Column("a")] }), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT CAST(a AS text), min(b), max(b), sum(b), avg(b) FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: Cast(Column("a"), Native(Text)), alias: None }, Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "min" }, args: [Column("b")] }), alias: None }, Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "max" }, args: [Column("b")] }), alias: None }, Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "sum" }, args: [Column("b")] }), alias: None }, Selector { expr: Function(FunctionCall { name: QualifiedName { keyspace: None, name: "avg" }, args: [Column("b")] }), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT m['k'], u.f, 1, 'lit', -2.5, null, [1], {1: 2} FROM t"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: Some([Selector { expr: Element(Column("m"), Literal(String("k"))), alias: None }, Selector { expr: Field(Column("u"), "f"), alias: None }, Selector { expr: Term(Literal(Integer("1"))), alias: None }, Selector { expr: Term(Literal(String("lit"))), alias: None }, Selector { expr: Term(Literal(Float("-2.5"))), alias: None }, Selector { expr: Term(Null), alias: None }, Selector { expr: Term(List([Literal(Integer("1"))])), alias: None }, Selector { expr: Term(Map([(Literal(Integer("1")), Literal(Integer("2")))])), alias: None }]), where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE pk = 1 ORDER BY c DESC, d"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Column("pk"), op: Eq, value: Literal(Integer("1")) }], group_by: [], order_by: [("c", Desc), ("d", Asc)], per_partition_limit: None, limit: None, allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE pk = 1 GROUP BY pk, c PER PARTITION LIMIT 2 LIMIT ? ALLOW FILTERING"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Column("pk"), op: Eq, value: Literal(Integer("1")) }], group_by: ["pk", "c"], order_by: [], per_partition_limit: Some(Literal(Integer("2"))), limit: Some(Bind(BindMarker { index: 0, name: None, line: 1, column: 72 })), allow_filtering: true, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t LIMIT :lim"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: Some(Bind(BindMarker { index: 0, name: Some("lim"), line: 1, column: 22 })), allow_filtering: false, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE a = 1 ORDER BY c ASC LIMIT 10 ALLOW FILTERING"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Column("a"), op: Eq, value: Literal(Integer("1")) }], group_by: [], order_by: [("c", Asc)], per_partition_limit: None, limit: Some(Literal(Integer("10"))), allow_filtering: true, bypass_cache: false })"##,
        ),
        (
            r##"SELECT * FROM t WHERE a = 1 ALLOW FILTERING BYPASS CACHE"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [Compare { target: Column("a"), op: Eq, value: Literal(Integer("1")) }], group_by: [], order_by: [], per_partition_limit: None, limit: None, allow_filtering: true, bypass_cache: true })"##,
        ),
        (
            r##"select * from t limit 1 bypass cache"##,
            r##"Select(Select { table: QualifiedName { keyspace: None, name: "t" }, json: false, distinct: false, selectors: None, where_clause: [], group_by: [], order_by: [], per_partition_limit: None, limit: Some(Literal(Integer("1"))), allow_filtering: false, bypass_cache: true })"##,
        ),
    ]);
}

#[test]
fn terms() {
    check(&[
        (
            r##"INSERT INTO t (a, b, c, d, e, f, g, h) VALUES (0, -17, 3.25, -1.5e3, 2E10, NaN, -NaN, Infinity)"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c", "d", "e", "f", "g", "h"], values: [Literal(Integer("0")), Literal(Integer("-17")), Literal(Float("3.25")), Literal(Float("-1.5e3")), Literal(Float("2E10")), Literal(Float("NaN")), Literal(Float("NaN")), Literal(Float("Infinity"))] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b, c, d) VALUES (-Infinity, true, FALSE, null)"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c", "d"], values: [Literal(Float("-Infinity")), Literal(Boolean(true)), Literal(Boolean(false)), Null] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b, c) VALUES ('it''s', $$a 'quoted' $ string$$, '')"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c"], values: [Literal(String("it's")), Literal(String("a 'quoted' $ string")), Literal(String(""))] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b, c) VALUES (550e8400-e29b-41d4-a716-446655440000, 0xCAFEbabe, 0x)"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c"], values: [Literal(Uuid("550e8400-e29b-41d4-a716-446655440000")), Literal(Blob("0xCAFEbabe")), Literal(Blob("0x"))] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b, c, d, e, f) VALUES (1h30m, 3mo2w1d, -10ms, P1DT2H, P3W, P0001-02-03T04:05:06)"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c", "d", "e", "f"], values: [Literal(Duration("1h30m")), Literal(Duration("3mo2w1d")), Literal(Duration("-10ms")), Literal(Duration("P1DT2H")), Literal(Duration("P3W")), Literal(Duration("P0001-02-03T04:05:06"))] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b, c, d, e, f) VALUES ([], [1, [2]], {}, {1, 2}, {'a': 1, 'b': {'c': 2}}, {street: 'x', "Zip": 1})"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c", "d", "e", "f"], values: [List([]), List([Literal(Integer("1")), List([Literal(Integer("2"))])]), EmptyBraces, Set([Literal(Integer("1")), Literal(Integer("2"))]), Map([(Literal(String("a")), Literal(Integer("1"))), (Literal(String("b")), Map([(Literal(String("c")), Literal(Integer("2")))]))]), UserType([("street", Literal(String("x"))), ("Zip", Literal(Integer("1")))])] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b, c) VALUES ((1, 'a', (2.5, null)), (int) ?, (frozen<list<text>>) :x)"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c"], values: [Tuple([Literal(Integer("1")), Literal(String("a")), Tuple([Literal(Float("2.5")), Null])]), TypeHint(Native(Int), Bind(BindMarker { index: 0, name: None, line: 1, column: 61 })), TypeHint(Frozen(List(Native(Text))), Bind(BindMarker { index: 1, name: Some("x"), line: 1, column: 85 }))] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b, c) VALUES (now(), uuid(), toTimestamp(now()))"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b", "c"], values: [Function(FunctionCall { name: QualifiedName { keyspace: None, name: "now" }, args: [] }), Function(FunctionCall { name: QualifiedName { keyspace: None, name: "uuid" }, args: [] }), Function(FunctionCall { name: QualifiedName { keyspace: None, name: "totimestamp" }, args: [Function(FunctionCall { name: QualifiedName { keyspace: None, name: "now" }, args: [] })] })] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
        (
            r##"INSERT INTO t (a, b) VALUES (ks.f(1, 'x', [?]), blobAsText(0x61))"##,
            r##"Insert(Insert { table: QualifiedName { keyspace: None, name: "t" }, values: Columns { columns: ["a", "b"], values: [Function(FunctionCall { name: QualifiedName { keyspace: Some("ks"), name: "f" }, args: [Literal(Integer("1")), Literal(String("x")), List([Bind(BindMarker { index: 0, name: None, line: 1, column: 43 })])] }), Function(FunctionCall { name: QualifiedName { keyspace: None, name: "blobastext" }, args: [Literal(Blob("0x61"))] })] }, if_not_exists: false, using: Using { ttl: None, timestamp: None } })"##,
        ),
    ]);
}

#[test]
fn types() {
    check(&[
        (
            r##"CREATE TABLE t (a ascii PRIMARY KEY, b bigint, c blob, d boolean, e counter, f date, g decimal, h double, i duration, j float, k inet, l int, m smallint, n text, o time, p timestamp, q timeuuid, r tinyint, s uuid, t varchar, u varint)"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Ascii), is_static: false, primary_key: true, mask: None }, ColumnDef { name: "b", ty: Native(Bigint), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "c", ty: Native(Blob), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "d", ty: Native(Boolean), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "e", ty: Native(Counter), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "f", ty: Native(Date), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "g", ty: Native(Decimal), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "h", ty: Native(Double), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "i", ty: Native(Duration), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "j", ty: Native(Float), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "k", ty: Native(Inet), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "l", ty: Native(Int), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "m", ty: Native(Smallint), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "n", ty: Native(Text), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "o", ty: Native(Time), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "p", ty: Native(Timestamp), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "q", ty: Native(Timeuuid), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "r", ty: Native(Tinyint), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "s", ty: Native(Uuid), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "t", ty: Native(Text), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "u", ty: Native(Varint), is_static: false, primary_key: false, mask: None }], key_clauses: [], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
        (
            r##"CREATE TABLE t (a int PRIMARY KEY, b list<int>, c set<frozen<tuple<uuid, timeuuid>>>, d map<text, frozen<map<int, blob>>>, e frozen<addr>, f tuple<int, tuple<int, text>>, g ks."Addr", h LIST<TEXT>)"##,
            r##"CreateTable(CreateTable { name: QualifiedName { keyspace: None, name: "t" }, if_not_exists: false, columns: [ColumnDef { name: "a", ty: Native(Int), is_static: false, primary_key: true, mask: None }, ColumnDef { name: "b", ty: List(Native(Int)), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "c", ty: Set(Frozen(Tuple([Native(Uuid), Native(Timeuuid)]))), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "d", ty: Map(Native(Text), Frozen(Map(Native(Int), Native(Blob)))), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "e", ty: Frozen(UserDefined(QualifiedName { keyspace: None, name: "addr" })), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "f", ty: Tuple([Native(Int), Tuple([Native(Int), Native(Text)])]), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "g", ty: UserDefined(QualifiedName { keyspace: Some("ks"), name: "Addr" }), is_static: false, primary_key: false, mask: None }, ColumnDef { name: "h", ty: List(Native(Text)), is_static: false, primary_key: false, mask: None }], key_clauses: [], clustering_order: [], compact_storage: false, properties: [] })"##,
        ),
    ]);
}

#[test]
fn types_indexes() {
    check(&[
        (
            r##"CREATE TYPE ks.addr (street text, zip int)"##,
            r##"CreateType(CreateType { name: QualifiedName { keyspace: Some("ks"), name: "addr" }, if_not_exists: false, fields: [("street", Native(Text)), ("zip", Native(Int))] })"##,
        ),
        (
            r##"CREATE TYPE IF NOT EXISTS addr (street text, phones frozen<set<text>>)"##,
            r##"CreateType(CreateType { name: QualifiedName { keyspace: None, name: "addr" }, if_not_exists: true, fields: [("street", Native(Text)), ("phones", Frozen(Set(Native(Text))))] })"##,
        ),
        (
            r##"ALTER TYPE addr ADD country text"##,
            r##"AlterType(AlterType { name: QualifiedName { keyspace: None, name: "addr" }, if_exists: false, action: Add { field: "country", ty: Native(Text), if_not_exists: false } })"##,
        ),
        (
            r##"ALTER TYPE IF EXISTS addr ADD IF NOT EXISTS country text"##,
            r##"AlterType(AlterType { name: QualifiedName { keyspace: None, name: "addr" }, if_exists: true, action: Add { field: "country", ty: Native(Text), if_not_exists: true } })"##,
        ),
        (
            r##"ALTER TYPE addr RENAME IF EXISTS zip TO postcode"##,
            r##"AlterType(AlterType { name: QualifiedName { keyspace: None, name: "addr" }, if_exists: false, action: Rename { renames: [("zip", "postcode")], if_exists: true } })"##,
        ),
        (
            r##"ALTER TYPE addr ALTER zip TYPE text"##,
            r##"AlterType(AlterType { name: QualifiedName { keyspace: None, name: "addr" }, if_exists: false, action: Alter { field: "zip", ty: Native(Text) } })"##,
        ),
        (
            r##"ALTER TYPE ks.addr RENAME zip TO postcode AND street TO road"##,
            r##"AlterType(AlterType { name: QualifiedName { keyspace: Some("ks"), name: "addr" }, if_exists: false, action: Rename { renames: [("zip", "postcode"), ("street", "road")], if_exists: false } })"##,
        ),
        (
            r##"CREATE TYPE ks.type (key frozen<list>, v frozen<values>)"##,
            r##"CreateType(CreateType { name: QualifiedName { keyspace: Some("ks"), name: "type" }, if_not_exists: false, fields: [("key", Frozen(UserDefined(QualifiedName { keyspace: None, name: "list" }))), ("v", Frozen(UserDefined(QualifiedName { keyspace: None, name: "values" })))] })"##,
        ),
        (
            r##"DROP TYPE IF EXISTS ks.key"##,
            r##"DropType(DropType { name: QualifiedName { keyspace: Some("ks"), name: "key" }, if_exists: true })"##,
        ),
        (
            r##"DROP TYPE addr"##,
            r##"DropType(DropType { name: QualifiedName { keyspace: None, name: "addr" }, if_exists: false })"##,
        ),
        (
            r##"DROP TYPE IF EXISTS ks.addr"##,
            r##"DropType(DropType { name: QualifiedName { keyspace: Some("ks"), name: "addr" }, if_exists: true })"##,
        ),
        (
            r##"CREATE INDEX ON t ((a, b), v)"##,
            r##"CreateIndex(CreateIndex { name: None, if_not_exists: false, table: QualifiedName { keyspace: None, name: "t" }, targets: [PartitionKey(["a", "b"]), Column("v")], custom_class: None, properties: [] })"##,
        ),
        (
            r##"CREATE INDEX ON t(v)"##,
            r##"CreateIndex(CreateIndex { name: None, if_not_exists: false, table: QualifiedName { keyspace: None, name: "t" }, targets: [Column("v")], custom_class: None, properties: [] })"##,
        ),
        (
            r##"CREATE INDEX idx ON ks.t (v)"##,
            r##"CreateIndex(CreateIndex { name: Some("idx"), if_not_exists: false, table: QualifiedName { keyspace: Some("ks"), name: "t" }, targets: [Column("v")], custom_class: None, properties: [] })"##,
        ),
        (
            r##"CREATE INDEX IF NOT EXISTS idx ON t (keys(m))"##,
            r##"CreateIndex(CreateIndex { name: Some("idx"), if_not_exists: true, table: QualifiedName { keyspace: None, name: "t" }, targets: [Keys("m")], custom_class: None, properties: [] })"##,
        ),
        (
            r##"CREATE INDEX ON t (values(m))"##,
            r##"CreateIndex(CreateIndex { name: None, if_not_exists: false, table: QualifiedName { keyspace: None, name: "t" }, targets: [Values("m")], custom_class: None, properties: [] })"##,
        ),
        (
            r##"CREATE INDEX ON t (entries(m))"##,
            r##"CreateIndex(CreateIndex { name: None, if_not_exists: false, table: QualifiedName { keyspace: None, name: "t" }, targets: [Entries("m")], custom_class: None, properties: [] })"##,
        ),
        (
            r##"CREATE INDEX ON t (full(l))"##,
            r##"CreateIndex(CreateIndex { name: None, if_not_exists: false, table: QualifiedName { keyspace: None, name: "t" }, targets: [Full("l")], custom_class: None, properties: [] })"##,
        ),
        (
            r##"CREATE CUSTOM INDEX idx ON t (v) USING 'org.apache.cassandra.index.sasi.SASIIndex' WITH OPTIONS = {'mode': 'CONTAINS'}"##,
            r##"CreateIndex(CreateIndex { name: Some("idx"), if_not_exists: false, table: QualifiedName { keyspace: None, name: "t" }, targets: [Column("v")], custom_class: Some("org.apache.cassandra.index.sasi.SASIIndex"), properties: [Property { name: "options", value: Map([("mode", "CONTAINS")]) }] })"##,
        ),
        (
            r##"DROP INDEX idx"##,
            r##"DropIndex(DropIndex { name: QualifiedName { keyspace: None, name: "idx" }, if_exists: false })"##,
        ),
        (
            r##"DROP INDEX IF EXISTS ks.idx"##,
            r##"DropIndex(DropIndex { name: QualifiedName { keyspace: Some("ks"), name: "idx" }, if_exists: true })"##,
        ),
    ]);
}

#[test]
fn update() {
    check(&[
        (
            r##"UPDATE t SET v = 1 WHERE k = 0"##,
            r##"Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Set { column: "v", value: Literal(Integer("1")) }], where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("0")) }], conditions: None })"##,
        ),
        (
            r##"UPDATE ks.t USING TTL 5 AND TIMESTAMP 6 SET v = ? WHERE k = ? AND c = ?"##,
            r##"Update(Update { table: QualifiedName { keyspace: Some("ks"), name: "t" }, using: Using { ttl: Some(Literal(Integer("5"))), timestamp: Some(Literal(Integer("6"))) }, assignments: [Set { column: "v", value: Bind(BindMarker { index: 0, name: None, line: 1, column: 48 }) }], where_clause: [Compare { target: Column("k"), op: Eq, value: Bind(BindMarker { index: 1, name: None, line: 1, column: 60 }) }, Compare { target: Column("c"), op: Eq, value: Bind(BindMarker { index: 2, name: None, line: 1, column: 70 }) }], conditions: None })"##,
        ),
        (
            r##"UPDATE t SET c1 = c1 + 1, c2 = c2 - 1, c3 = c3 + -2 WHERE pk = 1 AND ck = 2"##,
            r##"Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Add { column: "c1", value: Literal(Integer("1")) }, Subtract { column: "c2", value: Literal(Integer("1")) }, Add { column: "c3", value: Literal(Integer("-2")) }], where_clause: [Compare { target: Column("pk"), op: Eq, value: Literal(Integer("1")) }, Compare { target: Column("ck"), op: Eq, value: Literal(Integer("2")) }], conditions: None })"##,
        ),
        (
            r##"UPDATE t SET l = [1, 2] + l, l = l + [3], s = s - {'a'}, m = m + {'k': 'v'} WHERE k = 1"##,
            r##"Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Prepend { column: "l", value: List([Literal(Integer("1")), Literal(Integer("2"))]) }, Add { column: "l", value: List([Literal(Integer("3"))]) }, Subtract { column: "s", value: Set([Literal(String("a"))]) }, Add { column: "m", value: Map([(Literal(String("k")), Literal(String("v")))]) }], where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("1")) }], conditions: None })"##,
        ),
        (
            r##"UPDATE t SET m['k'] = 'v', l[0] = 3, u.f = 1 WHERE k = 1"##,
            r##"Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [SetElement { column: "m", key: Literal(String("k")), value: Literal(String("v")) }, SetElement { column: "l", key: Literal(Integer("0")), value: Literal(Integer("3")) }, SetField { column: "u", field: "f", value: Literal(Integer("1")) }], where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("1")) }], conditions: None })"##,
        ),
        (
            r##"UPDATE t SET x += 2, y -= {1} WHERE k = 1"##,
            r##"Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Add { column: "x", value: Literal(Integer("2")) }, Subtract { column: "y", value: Set([Literal(Integer("1"))]) }], where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("1")) }], conditions: None })"##,
        ),
        (
            r##"UPDATE t SET v = 1 WHERE k IN (1, 2) IF EXISTS"##,
            r##"Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Set { column: "v", value: Literal(Integer("1")) }], where_clause: [In { target: Column("k"), values: Terms([Literal(Integer("1")), Literal(Integer("2"))]) }], conditions: Exists })"##,
        ),
        (
            r##"UPDATE t SET v = 1 WHERE k = 1 IF v = 3 AND m['k'] != null AND u.f > 2 AND w IN (1, 2)"##,
            r##"Update(Update { table: QualifiedName { keyspace: None, name: "t" }, using: Using { ttl: None, timestamp: None }, assignments: [Set { column: "v", value: Literal(Integer("1")) }], where_clause: [Compare { target: Column("k"), op: Eq, value: Literal(Integer("1")) }], conditions: Columns([Compare { target: Column("v"), op: Eq, value: Literal(Integer("3")) }, Compare { target: Element("m", Literal(String("k"))), op: Neq, value: Null }, Compare { target: Field("u", "f"), op: Gt, value: Literal(Integer("2")) }, In { target: Column("w"), values: Terms([Literal(Integer("1")), Literal(Integer("2"))]) }]) })"##,
        ),
    ]);
}

#[test]
fn primary_key_resolution() {
    use crate::ast::PrimaryKey;
    let key = |src: &str| match crate::parse_statement(src).unwrap().statement {
        crate::Statement::CreateTable(t) => t.primary_key(),
        other => panic!("{other:?}"),
    };
    let pk = |p: &[&str], c: &[&str]| PrimaryKey {
        partition_key: p.iter().map(|s| s.to_string()).collect(),
        clustering: c.iter().map(|s| s.to_string()).collect(),
    };
    assert_eq!(
        key("CREATE TABLE t (a int PRIMARY KEY)"),
        Ok(pk(&["a"], &[]))
    );
    assert_eq!(
        key("CREATE TABLE t (a int, b int, c int, PRIMARY KEY ((a, b), c))"),
        Ok(pk(&["a", "b"], &["c"]))
    );
    assert_eq!(
        key("CREATE TABLE t (a int, b int)"),
        Err("No PRIMARY KEY specified for table 't' (exactly one required)".into())
    );
    assert_eq!(
        key("CREATE TABLE t (a int PRIMARY KEY, b int PRIMARY KEY)"),
        Err("Multiple PRIMARY KEY specified for table 't' (exactly one required)".into())
    );
    assert!(key("CREATE TABLE t (a int PRIMARY KEY, b int, PRIMARY KEY (b))").is_err());
}

#[test]
fn types_map_to_engine_types() {
    use crate::ast::TypeName;
    use cairn_engine::model::types::CqlType;
    let col_types = |src: &str| match crate::parse_statement(src).unwrap().statement {
        crate::Statement::CreateTable(t) => t.columns.into_iter().map(|c| c.ty).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    let types = col_types(
        "CREATE TABLE t (a map<text, frozen<list<int>>> PRIMARY KEY, b tuple<int, varchar>, \
         c frozen<addr>, d list<frozen<ks.addr>>, e 'org.Foo', f vector<float, 2>, g counter)",
    );
    assert_eq!(
        types[0].to_cql_type(),
        CqlType::parse("map<text, frozen<list<int>>>")
    );
    assert_eq!(types[1].to_cql_type(), CqlType::parse("tuple<int, text>"));
    for t in &types[2..6] {
        assert_eq!(t.to_cql_type(), None, "{t:?}");
    }
    let shown: Vec<String> = types.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        vec![
            "map<text, frozen<list<int>>>",
            "tuple<int, text>",
            "frozen<addr>",
            "list<frozen<ks.addr>>",
            "'org.Foo'",
            "vector<float, 2>",
            "counter",
        ]
    );
    assert_eq!(types[6], TypeName::Native(CqlType::Counter));
    assert!(types[6].contains_counter());
    assert!(!types[0].contains_counter());
    // Every native name the engine knows parses to the same engine type.
    for name in [
        "ascii",
        "bigint",
        "blob",
        "boolean",
        "counter",
        "date",
        "decimal",
        "double",
        "duration",
        "float",
        "inet",
        "int",
        "smallint",
        "text",
        "time",
        "timestamp",
        "timeuuid",
        "tinyint",
        "uuid",
        "varchar",
        "varint",
    ] {
        let t = col_types(&format!("CREATE TABLE t (a {name} PRIMARY KEY)"));
        assert_eq!(t[0].to_cql_type(), CqlType::parse(name), "{name}");
    }
}

#[test]
fn bind_markers_are_counted_in_order() {
    let p = crate::parse_statement(
        "UPDATE t USING TTL ? SET a = :a, m[?] = ? WHERE k IN ? AND c = :a IF v = ?",
    )
    .unwrap();
    let got: Vec<(usize, Option<&str>, u32)> = p
        .bind_markers
        .iter()
        .map(|m| (m.index, m.name.as_deref(), m.column))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, None, 19),
            (1, Some("a"), 29),
            (2, None, 35),
            (3, None, 40),
            (4, None, 53),
            (5, Some("a"), 63),
            (6, None, 73),
        ]
    );
    // Quoted marker names keep their case; unquoted ones are lowercased.
    let p = crate::parse_statement(r#"SELECT * FROM t WHERE a = :"Key" AND b = :Val"#).unwrap();
    let names: Vec<_> = p.bind_markers.iter().map(|m| m.name.clone()).collect();
    assert_eq!(
        names,
        vec![Some("Key".to_string()), Some("val".to_string())]
    );
    assert!(crate::parse_statement("SELECT * FROM t")
        .unwrap()
        .bind_markers
        .is_empty());
}

#[test]
fn multiple_statements() {
    let text = "INSERT INTO t (a) VALUES (?); ; SELECT * FROM t WHERE a = ? AND b = ?;\n\
                BEGIN BATCH INSERT INTO t (a) VALUES (?); APPLY BATCH; USE ks";
    let all = crate::parse_statements(text).unwrap();
    assert_eq!(all.len(), 4);
    let counts: Vec<usize> = all.iter().map(|s| s.bind_markers.len()).collect();
    assert_eq!(counts, vec![1, 2, 1, 0]);
    let spans: Vec<&str> = all.iter().map(|s| &text[s.span.clone()]).collect();
    assert_eq!(
        spans,
        vec![
            "INSERT INTO t (a) VALUES (?)",
            "SELECT * FROM t WHERE a = ? AND b = ?",
            "BEGIN BATCH INSERT INTO t (a) VALUES (?); APPLY BATCH",
            "USE ks",
        ]
    );
    assert!(crate::parse_statements("").unwrap().is_empty());
    assert!(crate::parse_statements(" ;; -- nothing\n")
        .unwrap()
        .is_empty());
    let e = crate::parse_statements("USE a USE b").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 1:6 mismatched input 'USE' expecting ';' (USE a [USE] b)"
    );
}

/// What `DESCRIBE TABLE` prints on Cassandra 5 must parse back (cqlsh users paste it).
#[test]
fn describe_output_parses() {
    let text = "CREATE TABLE ks.t (
    pk bigint,
    ck bigint,
    v blob,
    PRIMARY KEY (pk, ck)
) WITH CLUSTERING ORDER BY (ck ASC)
    AND additional_write_policy = '99p'
    AND allow_auto_snapshot = true
    AND bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND cdc = false
    AND comment = ''
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = {'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}
    AND memtable = 'default'
    AND crc_check_chance = 1.0
    AND default_time_to_live = 0
    AND extensions = {}
    AND gc_grace_seconds = 864000
    AND incremental_backups = true
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair = 'BLOCKING'
    AND speculative_retry = '99p';";
    let crate::Statement::CreateTable(t) = crate::parse_statement(text).unwrap().statement else {
        panic!()
    };
    assert_eq!(t.properties.len(), 19);
    assert_eq!(
        t.clustering_order,
        vec![("ck".to_string(), crate::ast::Order::Asc)]
    );
    let ext = t
        .properties
        .iter()
        .find(|p| p.name == "extensions")
        .unwrap();
    assert_eq!(ext.value, crate::ast::PropertyValue::Map(vec![]));
}
