"""Validation as Cassandra 5.0 validates: keyspace replication, table options, schema
statements, batch thresholds, durations. Every expected code and text below was checked
against Apache Cassandra 5.0.9; deliberate differences are listed in docs/cql.md."""

import pytest
from cassandra import AlreadyExists, InvalidRequest, Unauthorized
from cassandra.protocol import ConfigurationException, SyntaxException

from helpers import expect_error, server_code, server_message, tuples

SYNTAX, UNAUTHORIZED, INVALID, CONFIG = 0x2000, 0x2100, 0x2200, 0x2300
CLASS = {SYNTAX: SyntaxException, UNAUTHORIZED: Unauthorized, INVALID: InvalidRequest,
         CONFIG: ConfigurationException}


def refused(session, statement, code, message):
    err = expect_error(CLASS[code], session.execute, statement)
    assert server_code(err) == code, statement
    assert server_message(err) == message, statement


def warnings_of(session, statement):
    return session.execute(statement).response_future.warnings or []


def replication(session, ks):
    return dict(session.execute(
        "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s", [ks]).one().replication)


SS = "org.apache.cassandra.locator.SimpleStrategy"
NTS = "org.apache.cassandra.locator.NetworkTopologyStrategy"


# ---- keyspace replication ----

BAD_REPLICATION = [
    ("{'class': 'SimpleStrategy', 'replication_factor': 'x'}", CONFIG, 'For input string: "x"'),
    ("{'class': 'SimpleStrategy', 'replication_factor': 1.5}", CONFIG, 'For input string: "1.5"'),
    ("{'class': 'SimpleStrategy', 'replication_factor': ''}", CONFIG, 'For input string: ""'),
    ("{'class': 'SimpleStrategy', 'replication_factor': -1}", CONFIG,
     "Replication factor must be non-negative, found -1"),
    ("{'class': 'SimpleStrategy', 'replication_factor': '3/1'}", CONFIG,
     "Transient replication is not enabled on this node"),
    ("{'class': 'SimpleStrategy', 'replication_factor': '3/'}", CONFIG,
     "Replication factor format is <replicas> or <replicas>/<transient>"),
    ("{'class': 'SimpleStrategy', 'replication_factor': 1, 'foo': 2}", CONFIG,
     "Unrecognized strategy option {foo} passed to SimpleStrategy for keyspace ks_bad"),
    ("{'class': 'simplestrategy', 'replication_factor': 1}", CONFIG,
     "Unable to find replication strategy class 'org.apache.cassandra.locator.simplestrategy'"),
    ("{'class': 'com.foo.SimpleStrategy'}", CONFIG,
     "Unable to find replication strategy class 'com.foo.SimpleStrategy'"),
    ("{'class': 'EverywhereStrategy'}", CONFIG,
     "Unable to find replication strategy class 'org.apache.cassandra.locator.EverywhereStrategy'"),
    ("{'class': 'OldNetworkTopologyStrategy'}", CONFIG,
     "The support for the OldNetworkTopologyStrategy has been removed in C* version 4.0. "
     "The keyspace strategy should be switch to NetworkTopologyStrategy"),
    ("{'class': 'LocalStrategy'}", INVALID,
     "Unable to use given strategy class: LocalStrategy is reserved for internal use."),
    ("{'replication_factor': 1}", CONFIG, "Missing replication strategy class"),
    # Unknown data centers: this node knows only its own.
    ("{'class': 'NetworkTopologyStrategy', 'dc1': 1}", CONFIG,
     "Unrecognized strategy option {dc1} passed to NetworkTopologyStrategy for keyspace ks_bad"),
    ("{'class': 'NetworkTopologyStrategy', 'dc1': 1, 'dc2': 3}", CONFIG,
     "Unrecognized strategy option {dc2} passed to NetworkTopologyStrategy for keyspace ks_bad"),
    ("{'class': 'NetworkTopologyStrategy', 'datacenter1': 'x'}", CONFIG, 'For input string: "x"'),
    ("{'class': 'NetworkTopologyStrategy', 'datacenter1': '3/1'}", CONFIG,
     "Transient replication is not enabled on this node"),
    ("{'class': 'NetworkTopologyStrategy', 'datacenter1': 0}", CONFIG,
     "Configuration for at least one datacenter must be present"),
    ("{'class': 'NetworkTopologyStrategy', 'replication_factor': 'x'}", CONFIG,
     "Configuration for at least one datacenter must be present"),
    ("{'class': 'NetworkTopologyStrategy', 'REPLICATION_FACTOR': 1}", CONFIG,
     "replication_factor should not appear as an option at construction time for NetworkTopologyStrategy"),
    ("{'class': 'SimpleStrategy', 'replication_factor': 1, 'replication_factor': 2}", SYNTAX,
     "Multiple definition for property replication_factor"),
]


@pytest.mark.parametrize("rep,code,message", BAD_REPLICATION)
def test_bad_replication(session, rep, code, message):
    refused(session, f"CREATE KEYSPACE ks_bad WITH replication = {rep}", code, message)


def test_replication_values_defaults_and_warnings(session):
    session.execute("DROP KEYSPACE IF EXISTS ks_rep")
    # The factor defaults to 1; values are kept as written.
    session.execute("CREATE KEYSPACE ks_rep WITH replication = {'class': 'SimpleStrategy'}")
    assert replication(session, "ks_rep") == {"class": SS, "replication_factor": "1"}
    session.execute("DROP KEYSPACE ks_rep")
    session.execute("CREATE KEYSPACE ks_rep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '+1'}")
    assert replication(session, "ks_rep") == {"class": SS, "replication_factor": "+1"}
    session.execute("DROP KEYSPACE ks_rep")
    # A factor above the number of nodes is accepted with Cassandra's warning.
    w = warnings_of(session, "CREATE KEYSPACE ks_rep WITH replication = "
                             "{'class': 'NetworkTopologyStrategy', 'datacenter1': 5}")
    assert w == ["Your replication factor 5 for keyspace ks_rep is higher than the number of nodes 1 "
                 "for datacenter datacenter1"]
    # ALTER: replication_factor expands to the data centers, keeping the ones already set.
    session.execute("ALTER KEYSPACE ks_rep WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
    assert replication(session, "ks_rep") == {"class": NTS, "datacenter1": "5"}
    session.execute("ALTER KEYSPACE ks_rep WITH replication = {'class': 'SimpleStrategy'}")
    assert replication(session, "ks_rep") == {"class": SS, "replication_factor": "1"}
    w = warnings_of(session, "ALTER KEYSPACE ks_rep WITH replication = "
                             "{'class': 'SimpleStrategy', 'replication_factor': 2}")
    assert w == ["Your replication factor 2 for keyspace ks_rep is higher than the number of nodes 1",
                 "When increasing replication factor you need to run a full (-full) repair to distribute the data."]
    session.execute("ALTER KEYSPACE ks_rep WITH replication = {'class': 'NetworkTopologyStrategy'}")
    assert replication(session, "ks_rep") == {"class": NTS, "datacenter1": "2"}
    # No class: the replication stays (an empty map too).
    session.execute("ALTER KEYSPACE ks_rep WITH replication = {}")
    session.execute("ALTER KEYSPACE ks_rep WITH durable_writes = 'no'")
    row = session.execute("SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'ks_rep'").one()
    assert (row.durable_writes, dict(row.replication)) == (False, {"class": NTS, "datacenter1": "2"})
    ddl = session.execute("DESCRIBE KEYSPACE ks_rep").one().create_statement
    assert ddl == ("CREATE KEYSPACE ks_rep WITH replication = {'class': 'NetworkTopologyStrategy', "
                   "'datacenter1': '2'}  AND durable_writes = false;")
    refused(session, "ALTER KEYSPACE ks_rep WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 0}",
            CONFIG, "Configuration for at least one datacenter must be present")
    refused(session, "ALTER KEYSPACE ks_rep WITH replication = {'replication_factor': 1}",
            CONFIG, "Missing replication strategy class")
    session.execute("DROP KEYSPACE ks_rep")


KEYSPACE_STATEMENTS = [
    ("CREATE KEYSPACE ks_x WITH durable_writes = true", INVALID, "Missing mandatory option 'replication'"),
    ("CREATE KEYSPACE ks_x WITH replication = 'x'", SYNTAX,
     "Invalid value for property 'replication'. It should be a map."),
    ("CREATE KEYSPACE ks_x WITH replication = {'class': 'SimpleStrategy'} AND durable_writes = 'maybe'", SYNTAX,
     "Invalid boolean value maybe for 'durable_writes'. Positive values can be '1', 'true' or 'yes'. "
     "Negative values can be '0', 'false' or 'no'."),
    ("CREATE KEYSPACE ks_x WITH replication = {'class': 'SimpleStrategy'} AND durable_writes = {'a': 1}", SYNTAX,
     "Invalid value for property 'durable_writes'. It should be a string"),
    ("CREATE KEYSPACE ks_x WITH replication = {'class': 'SimpleStrategy'} AND graph_engine = 'x'", SYNTAX,
     "Unknown property 'graph_engine'"),
    ("CREATE KEYSPACE ks_x WITH replication = {'class': 'SimpleStrategy'} AND replication = {'class': 'SimpleStrategy'}",
     SYNTAX, "Multiple definitions for property 'replication'"),
    ("CREATE KEYSPACE a123456789012345678901234567890123456789012345678 WITH replication = "
     "{'class': 'SimpleStrategy'}", INVALID,
     'Keyspace name must not be more than 48 characters long (got 49 characters for '
     '"a123456789012345678901234567890123456789012345678")'),
    ('CREATE KEYSPACE "a-b" WITH replication = {\'class\': \'SimpleStrategy\'}', INVALID,
     'Keyspace name must not be empty and must contain alphanumeric or underscore characters only (got "a-b")'),
    ('DROP KEYSPACE IF EXISTS "a-b"', INVALID,
     'Keyspace name must not be empty and must contain alphanumeric or underscore characters only (got "a-b")'),
    ("CREATE KEYSPACE system WITH replication = {'class': 'SimpleStrategy'}", INVALID,
     "System keyspace 'system' is not user-modifiable"),
    ("CREATE KEYSPACE IF NOT EXISTS system_views WITH replication = {'class': 'SimpleStrategy'}", INVALID,
     "System keyspace 'system_views' is not user-modifiable"),
    ("ALTER KEYSPACE system WITH durable_writes = true", UNAUTHORIZED, "system keyspace is not user-modifiable."),
    ("ALTER KEYSPACE system_views WITH durable_writes = true", UNAUTHORIZED,
     "system_views keyspace is not user-modifiable."),
    ("ALTER KEYSPACE system_traces WITH replication = {'class': 'LocalStrategy'}", INVALID,
     "Unable to use given strategy class: LocalStrategy is reserved for internal use."),
    ("DROP KEYSPACE system", UNAUTHORIZED, "system keyspace is not user-modifiable."),
    ("DROP KEYSPACE system_auth", UNAUTHORIZED, "Cannot DROP <keyspace system_auth>"),
    ("DROP KEYSPACE ks_never", INVALID, "Keyspace 'ks_never' doesn't exist"),
    ("ALTER KEYSPACE ks_never WITH durable_writes = true", INVALID, "Keyspace 'ks_never' doesn't exist"),
    ("ALTER KEYSPACE ks_never WITH replication = 'x'", SYNTAX,
     "Invalid value for property 'replication'. It should be a map."),
]


@pytest.mark.parametrize("statement,code,message", KEYSPACE_STATEMENTS)
def test_keyspace_statements(session, statement, code, message):
    refused(session, statement, code, message)


def test_keyspace_if_exists_and_system_names(session):
    session.execute("ALTER KEYSPACE IF EXISTS ks_never WITH durable_writes = true")
    session.execute("DROP KEYSPACE IF EXISTS ks_never")
    # Only system and system_schema (and the virtual keyspaces) are reserved names.
    session.execute("CREATE KEYSPACE system_foo WITH replication = {'class': 'SimpleStrategy'}")
    session.execute("DROP KEYSPACE system_foo")
    err = expect_error(AlreadyExists, session.execute,
                       "CREATE KEYSPACE system_auth WITH replication = {'class': 'SimpleStrategy'}")
    assert err.keyspace == "system_auth"


# ---- table options ----

@pytest.fixture(scope="module")
def opt(session, ks):
    session.execute(f"CREATE TABLE {ks}.opt (k int PRIMARY KEY, v int)")
    return f"{ks}.opt"


def shown(session, ks, table, column):
    return getattr(session.execute(
        f"SELECT {column} FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
        [ks, table]).one(), column)


@pytest.mark.parametrize("given,stored", [
    ("99p", "99p"), ("99PERCENTILE", "99p"), ("99.50P", "99.5p"), ("99.999999p", "100p"),
    ("50ms", "50ms"), ("50.5MS", "50ms"), ("always", "ALWAYS"), ("none", "NEVER"),
    ("min(99p, 50ms)", "MIN(99p,50ms)"), ("MAX(50ms,99.5p)", "MAX(99.5p,50ms)"),
])
def test_speculative_retry_values(session, ks, opt, given, stored):
    session.execute(f"ALTER TABLE {opt} WITH speculative_retry = '{given}' AND additional_write_policy = '{given}'")
    assert shown(session, ks, "opt", "speculative_retry") == stored
    assert shown(session, ks, "opt", "additional_write_policy") == stored


@pytest.mark.parametrize("value,message", [
    ("0p", "Invalid value 0p for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)"),
    ("100p", "Invalid value 100p for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)"),
    ("-5ms", "Invalid value -5ms for option 'speculative_retry'"),
    ("99", "Invalid value 99 for option 'speculative_retry'"),
    ("MIN(99p,ALWAYS)", "Invalid value MIN(99p,ALWAYS) for option 'speculative_retry'"),
    ("MIN(99p,90p)", "Invalid value MIN(99p,90p) for option 'speculative_retry': MIN()/MAX() arguments "
                     "should be of different types, but both are of type PERCENTILE"),
])
def test_speculative_retry_refused(session, opt, value, message):
    refused(session, f"ALTER TABLE {opt} WITH speculative_retry = '{value}'", CONFIG, message)
    # additional_write_policy is read the same way, and Cassandra names speculative_retry.
    refused(session, f"ALTER TABLE {opt} WITH additional_write_policy = '{value}'", CONFIG, message)


TABLE_OPTION_ERRORS = [
    ("gc_grace_seconds = -1", CONFIG, "gc_grace_seconds must be greater than or equal to 0 (got -1)"),
    ("gc_grace_seconds = 'x'", SYNTAX, "Invalid integer value x for 'gc_grace_seconds'"),
    ("gc_grace_seconds = 99999999999", SYNTAX, "Invalid integer value 99999999999 for 'gc_grace_seconds'"),
    ("default_time_to_live = 630720001", CONFIG,
     "default_time_to_live must be less than or equal to 630720000 (got 630720001)"),
    ("bloom_filter_fp_chance = 0", CONFIG,
     "bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 0.0)"),
    ("bloom_filter_fp_chance = 0.00000001", CONFIG,
     "bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 1.0E-8)"),
    ("bloom_filter_fp_chance = 'x'", SYNTAX, "Invalid double value x for 'bloom_filter_fp_chance'"),
    ("crc_check_chance = 1.5", CONFIG,
     "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got 1.5)"),
    ("min_index_interval = 0", CONFIG, "min_index_interval must be greater than or equal to 1 (got 0)"),
    ("max_index_interval = 64", CONFIG,
     "max_index_interval must be greater than or equal to min_index_interval (128) (got 64)"),
    ("memtable_flush_period_in_ms = -1", CONFIG,
     "memtable_flush_period_in_ms must be greater than or equal to 0 (got -1)"),
    ("memtable = 'skiplist'", CONFIG, 'Memtable configuration "skiplist" not found.'),
    ("memtable = {'class': 'x'}", SYNTAX, "Invalid value for property 'memtable'. It should be a string"),
    ("cdc = 'maybe'", SYNTAX, "Invalid boolean value maybe for 'cdc'. Positive values can be '1', 'true' or "
                              "'yes'. Negative values can be '0', 'false' or 'no'."),
    ("allow_auto_snapshot = 'x'", SYNTAX, "Invalid boolean value x for 'allow_auto_snapshot'. Positive values "
                                          "can be '1', 'true' or 'yes'. Negative values can be '0', 'false' or 'no'."),
    ("comment = {'a': 1}", SYNTAX, "Invalid value for property 'comment'. It should be a string"),
    ("caching = 'all'", SYNTAX, "Invalid value for property 'caching'. It should be a map."),
    ("caching = {'keys': 'x'}", CONFIG,
     "Invalid value 'x' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"),
    ("caching = {'keys': 'all', 'rows_per_partition': '-1'}", CONFIG,
     "Invalid value '-1' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer "
     "values are allowed"),
    ("caching = {'keys': 'all', 'foo': '1', 'bar': 2}", CONFIG,
     "Invalid caching sub-options [bar, foo]: only 'keys' and 'rows_per_partition' are allowed"),
    ("foo = 1", SYNTAX, "Unknown property 'foo'"),
    ("comment = 'a' AND comment = 'b'", SYNTAX, "Multiple definitions for property 'comment'"),
    ("id = '5a1c395e-b41f-11e5-9f22-ba0be0483c18'", CONFIG, "Cannot alter table id."),
    ("auto_repair = {'full_enabled': 'true'}", CONFIG,
     "auto_repair option is not supported unless auto-repair is enabled with -Dcassandra.autorepair.enable=true"),
    # Compression.
    ("compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 3}", CONFIG,
     "chunk_length_in_kb must be a power of 2"),
    ("compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 0}", CONFIG,
     "Invalid negative or null chunk_length_in_kb"),
    ("compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 'x'}", CONFIG,
     "Invalid value for chunk_length_in_kb"),
    ("compression = {'class': 'LZ4Compressor', 'foo': 1}", CONFIG, "Unknown compression options foo"),
    ("compression = {'chunk_length_in_kb': 64}", CONFIG, "Missing sub-option 'class' for the 'compression' option."),
    ("compression = {'enabled': 'maybe', 'class': 'LZ4Compressor'}", CONFIG,
     "If the 'enabled' option is set to false no other options must be specified"),
    ("compression = {'class': 'ZstdCompressor', 'compression_level': 50}", CONFIG,
     "ZstdCompressor.create() threw an error: java.lang.IllegalArgumentException compression_level=50 is invalid"),
    ("compression = {'class': 'Foo'}", CONFIG,
     "Could not create Compression for type org.apache.cassandra.io.compress.Foo"),
    # Compaction: Cassandra's checks and texts.
    ("compaction = {}", CONFIG, "Missing sub-option 'class' for the 'compaction' option"),
    ("compaction = {'class': 'Foo'}", CONFIG,
     "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.Foo'"),
    ("compaction = {'class': 'SizeTieredCompactionStrategy', 'foo': 'bar', 'zed': 1}", CONFIG,
     "Properties specified [zed, foo] are not understood by SizeTieredCompactionStrategy"),
    ("compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 1}", CONFIG,
     "Min compaction threshold cannot be less than 2 (got 1)"),
    ("compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 8, 'max_threshold': 4}", CONFIG,
     "Min compaction threshold (got 8) cannot be greater than max compaction threshold (got 4)"),
    ("compaction = {'class': 'SizeTieredCompactionStrategy', 'max_threshold': 0}", CONFIG,
     "Disabling compaction by setting compaction thresholds to 0 has been removed, set the compaction option "
     "'enabled' to false instead."),
    ("compaction = {'class': 'SizeTieredCompactionStrategy', 'tombstone_threshold': -0.1}", CONFIG,
     "tombstone_threshold must be greater than 0, but was -0.100000"),
    ("compaction = {'class': 'SizeTieredCompactionStrategy', 'bucket_low': 0.9, 'bucket_high': 0.8}", CONFIG,
     "bucket_high value (0.8) is less than or equal to the bucket_low value (0.9)"),
    ("compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': 'maybe'}", CONFIG,
     "enabled should either be 'true' or 'false', not maybe"),
    ("compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': 0}", CONFIG,
     "sstable_size_in_mb must be larger than 0, but was 0"),
    ("compaction = {'class': 'LeveledCompactionStrategy', 'fanout_size': 'x'}", CONFIG,
     "x is not a parsable int (base10) for fanout_size"),
    ("compaction = {'class': 'TimeWindowCompactionStrategy', 'compaction_window_unit': 'WEEKS'}", CONFIG,
     "WEEKS is not valid for compaction_window_unit"),
    ("compaction = {'class': 'TimeWindowCompactionStrategy', 'compaction_window_size': 0}", CONFIG,
     "0 must be greater than 1 for compaction_window_size"),
    ("compaction = {'class': 'TimeWindowCompactionStrategy', 'unsafe_aggressive_sstable_expiration': 'true'}",
     CONFIG, "unsafe_aggressive_sstable_expiration is requested but not allowed, restart cassandra with "
             "-Dcassandra.allow_unsafe_aggressive_sstable_expiration=true to allow it"),
]


@pytest.mark.parametrize("option,code,message", TABLE_OPTION_ERRORS)
def test_table_option_errors(session, opt, option, code, message):
    refused(session, f"ALTER TABLE {opt} WITH {option}", code, message)


def test_cassandra_5_options_are_kept_and_shown(session, ks, tname):
    session.execute(
        f"CREATE TABLE {ks}.{tname} (k int PRIMARY KEY, v int) WITH allow_auto_snapshot = false AND cdc = true "
        "AND incremental_backups = false AND memtable = 'default' AND read_repair = 'none' "
        "AND extensions = {'a': '01'} AND caching = {'rows_per_partition': '10'} AND comment = 'it''s' "
        "AND min_index_interval = 64 AND max_index_interval = 512 AND memtable_flush_period_in_ms = 60000 "
        "AND compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 16} "
        "AND id = '5a1c395e-b41f-11e5-9f22-ba0be0483c18'")
    row = session.execute("SELECT * FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
                          [ks, tname]).one()
    # As Cassandra writes them: allow_auto_snapshot / incremental_backups only when false,
    # cdc never (a node without cdc_enabled), memtable only when not the default.
    assert (row.allow_auto_snapshot, row.incremental_backups, row.cdc, row.memtable) == (False, False, None, None)
    assert dict(row.caching) == {"keys": "NONE", "rows_per_partition": "10"}
    assert (row.read_repair, row.comment, row.min_index_interval, row.max_index_interval,
            row.memtable_flush_period_in_ms) == ("NONE", "it's", 64, 512, 60000)
    assert dict(row.extensions) == {}
    assert str(row.id) == "5a1c395e-b41f-11e5-9f22-ba0be0483c18"
    ddl = session.execute(f"DESCRIBE TABLE {ks}.{tname}").one().create_statement
    assert ddl == (
        f"CREATE TABLE {ks}.{tname} (\n    k int PRIMARY KEY,\n    v int\n) WITH additional_write_policy = '99p'\n"
        "    AND allow_auto_snapshot = false\n    AND bloom_filter_fp_chance = 0.01\n"
        "    AND caching = {'keys': 'NONE', 'rows_per_partition': '10'}\n    AND cdc = true\n"
        "    AND comment = 'it''s'\n"
        "    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', "
        "'max_threshold': '32', 'min_threshold': '4'}\n"
        "    AND compression = {'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}\n"
        "    AND memtable = 'default'\n    AND crc_check_chance = 1.0\n    AND default_time_to_live = 0\n"
        "    AND extensions = {}\n    AND gc_grace_seconds = 864000\n    AND incremental_backups = false\n"
        "    AND max_index_interval = 512\n    AND memtable_flush_period_in_ms = 60000\n"
        "    AND min_index_interval = 64\n    AND read_repair = 'NONE'\n    AND speculative_retry = '99p';")
    # The DESCRIBE output creates the same table again.
    session.execute(f"DROP TABLE {ks}.{tname}")
    session.execute(ddl)
    assert session.execute(f"DESCRIBE TABLE {ks}.{tname}").one().create_statement == ddl


def test_compaction_shown_and_lcs_bloom_default(session, ks, tname):
    session.execute(f"CREATE TABLE {ks}.{tname} (k int PRIMARY KEY) WITH compaction = "
                    "{'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '10', 'fanout_size': 4, "
                    "'enabled': 'TRUE'}")
    assert dict(shown(session, ks, tname, "compaction")) == {
        "class": "org.apache.cassandra.db.compaction.LeveledCompactionStrategy", "enabled": "TRUE",
        "fanout_size": "4", "max_threshold": "32", "min_threshold": "4", "sstable_size_in_mb": "10"}
    # A new LCS table's default false-positive chance is 0.1, and stays after a change of strategy.
    assert shown(session, ks, tname, "bloom_filter_fp_chance") == 0.1
    session.execute(f"ALTER TABLE {ks}.{tname} WITH compaction = {{'class': 'SizeTieredCompactionStrategy'}}")
    assert shown(session, ks, tname, "bloom_filter_fp_chance") == 0.1


# ---- schema statements ----

SCHEMA_STATEMENTS = [
    ("DROP TABLE nosuchks.t", INVALID, "Table 'nosuchks.t' doesn't exist"),
    ("DROP TABLE {ks}.nosuch", INVALID, "Table '{ks}.nosuch' doesn't exist"),
    ("DROP TYPE nosuchks.ty", INVALID, "Type 'nosuchks.ty' doesn't exist"),
    ("DROP INDEX nosuchks.ix", INVALID, "Index 'nosuchks.ix' doesn't exist'"),
    ("ALTER TABLE nosuchks.t ADD x int", INVALID, "Table 'nosuchks.t' doesn't exist"),
    ("ALTER TABLE {ks}.nosuch WITH comment = 'x'", INVALID, "Table '{ks}.nosuch' doesn't exist"),
    ("ALTER TABLE {ks}.nosuch WITH gc_grace_seconds = 'x'", SYNTAX, "Invalid integer value x for 'gc_grace_seconds'"),
    ("CREATE TABLE nosuchks.t (k int PRIMARY KEY)", INVALID, "Keyspace 'nosuchks' doesn't exist"),
    ("TRUNCATE {ks}.nosuch", INVALID, "table nosuch does not exist"),
    ("TRUNCATE nosuchks.nosuch", INVALID, "keyspace nosuchks does not exist"),
    ("USE ?", SYNTAX, "Bind variables cannot be used for keyspace names"),
    ("SELECT * FROM ?", SYNTAX, "Bind variables cannot be used for table names"),
    ("SELECT * FROM ?.t", SYNTAX, "Bind variables cannot be used for keyspace names"),
    ("INSERT INTO {ks}.? (k) VALUES (1)", SYNTAX, "Bind variables cannot be used for table names"),
    ("DROP KEYSPACE ?", SYNTAX, "Bind variables cannot be used for keyspace names"),
    ("DROP TABLE system_auth.roles", UNAUTHORIZED, "Cannot DROP <table system_auth.roles>"),
    ("DROP TABLE IF EXISTS system_auth.nosuch", UNAUTHORIZED, "Cannot DROP <table system_auth.nosuch>"),
    ("ALTER TABLE system_auth.roles WITH comment = 'x'", UNAUTHORIZED, "Cannot ALTER <table system_auth.roles>"),
    ("CREATE TABLE system_auth.foo (k int PRIMARY KEY)", UNAUTHORIZED, "Cannot CREATE <all tables in system_auth>"),
    ("CREATE TABLE system.foo (k int PRIMARY KEY)", UNAUTHORIZED, "system keyspace is not user-modifiable."),
    ("DROP TABLE system_views.settings", UNAUTHORIZED, "system_views keyspace is not user-modifiable."),
    ("CREATE TABLE {ks}.a-b (k int PRIMARY KEY)", SYNTAX, None),
    ('CREATE TABLE {ks}."a-b" (k int PRIMARY KEY)', CONFIG,
     '{ks}.a-b: Table name must not be empty or not contain non-alphanumeric-underscore characters (got "a-b")'),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, v int, v text)", INVALID,
     "Duplicate column 'v' declaration for table '{ks}.dup'"),
    ("CREATE TABLE {ks}.dup (k int, v int, PRIMARY KEY ((k, k), v))", INVALID,
     "Duplicate column 'k' in PRIMARY KEY clause for table 'dup'"),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, v int PRIMARY KEY)", INVALID,
     "Multiple PRIMARY KEY specified for table '{ks}.dup' (exactly one required)"),
    ("CREATE TABLE {ks}.dup (k int, v int)", INVALID,
     "No PRIMARY KEY specifed for table '{ks}.dup' (exactly one required)"),
    ("CREATE TABLE {ks}.dup (k int, v int, PRIMARY KEY (k, x))", INVALID,
     "Unknown column 'x' referenced in PRIMARY KEY for table 'dup'"),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, c counter, v int)", INVALID,
     "Cannot mix counter and non counter columns in the same table"),
    ("CREATE TABLE {ks}.dup (k counter PRIMARY KEY, c counter)", INVALID,
     "counter type is not supported for PRIMARY KEY column 'k'"),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, c counter) WITH default_time_to_live = 5", INVALID,
     "Cannot set default_time_to_live on a table with counters"),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, c list<counter>)", INVALID,
     "Counters are not allowed inside collections: list<counter>"),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, c tuple<counter, int>)", INVALID,
     "Counters are not allowed inside tuples"),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, s int static)", INVALID,
     "Static columns are only useful (and thus allowed) if the table has at least one clustering column"),
    ("CREATE TABLE {ks}.dup (k int, c int static, PRIMARY KEY (k, c))", INVALID,
     "Static column 'c' cannot be part of the PRIMARY KEY"),
    ("CREATE TABLE {ks}.dup (k int, c int, v int, PRIMARY KEY (k, c)) WITH COMPACT STORAGE", INVALID,
     "Guardrail compact_tables violated: Creation of new COMPACT STORAGE tables is not allowed"),
    ("CREATE TABLE {ks}.dup (k int, c int, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (v DESC)", INVALID,
     "Only clustering key columns can be defined in CLUSTERING ORDER directive: [v] are not clustering columns"),
    ("CREATE TABLE {ks}.dup (k int, c int, d int, PRIMARY KEY (k, c, d)) WITH CLUSTERING ORDER BY (d DESC, c ASC)",
     INVALID, "The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns "
              "(c must appear before d)"),
    ("CREATE TABLE {ks}.dup (k int, c int, d int, PRIMARY KEY (k, c, d)) WITH CLUSTERING ORDER BY (d DESC)",
     INVALID, "Missing CLUSTERING ORDER for column c"),
    ("CREATE TABLE {ks}.dup (k int, c int, d int, PRIMARY KEY (k, c, d)) WITH CLUSTERING ORDER BY (c DESC, c ASC)",
     INVALID, "Duplicate column 'c' in CLUSTERING ORDER BY clause for table '{ks}.dup'"),
    # Durations cannot be compared, so not keys, set elements or map keys.
    ("CREATE TABLE {ks}.dup (k duration PRIMARY KEY)", INVALID,
     "duration type is not supported for PRIMARY KEY column 'k'"),
    ("CREATE TABLE {ks}.dup (k int, c frozen<tuple<int, duration>>, PRIMARY KEY (k, c))", INVALID,
     "duration type is not supported for PRIMARY KEY column 'c'"),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, s set<duration>)", INVALID,
     "Durations are not allowed inside sets: set<duration>"),
    ("CREATE TABLE {ks}.dup (k frozen<set<duration>> PRIMARY KEY)", INVALID,
     "Durations are not allowed inside sets: frozen<set<duration>>"),
    ("CREATE TABLE {ks}.dup (k int PRIMARY KEY, m map<duration, int>)", INVALID,
     "Durations are not allowed as map keys: map<duration, int>"),
    ("ALTER TABLE {ks}.opt ADD s set<duration>", INVALID, "Durations are not allowed inside sets: set<duration>"),
    ("ALTER TABLE {ks}.opt ADD c counter", CONFIG, '{ks}.opt: Cannot have a counter column ("c") in a non counter table'),
]


@pytest.mark.parametrize("statement,code,message", SCHEMA_STATEMENTS)
def test_schema_statements(session, ks, opt, statement, code, message):
    statement = statement.format(ks=ks)
    if message is None:
        expect_error(CLASS[code], session.execute, statement)
    else:
        refused(session, statement, code, message.format(ks=ks))


def test_if_exists_answers_for_missing_keyspaces_and_tables(session, ks):
    for statement in ["DROP TABLE IF EXISTS nosuchks.t", "DROP TYPE IF EXISTS nosuchks.ty",
                      "DROP INDEX IF EXISTS nosuchks.ix", "ALTER TABLE IF EXISTS nosuchks.t ADD x int",
                      f"ALTER TABLE IF EXISTS {ks}.nosuch WITH comment = 'x'", f"DROP TYPE IF EXISTS {ks}.ty",
                      "ALTER KEYSPACE IF EXISTS nosuchks WITH durable_writes = true"]:
        session.execute(statement)


def test_create_if_not_exists_keeps_the_existing_table(session, ks, tname):
    session.execute(f"CREATE TABLE {ks}.{tname} (k int PRIMARY KEY, v int)")
    session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.{tname} (a text PRIMARY KEY, b int)")
    columns = [r.column_name for r in session.execute(
        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s AND table_name = %s", [ks, tname])]
    assert sorted(columns) == ["k", "v"]


def test_long_names(session, ks):
    # Table names may be up to 222 characters (the directory name then fits 255).
    name = "t" * 222
    session.execute(f"CREATE TABLE {ks}.{name} (k int PRIMARY KEY)")
    session.execute(f"DROP TABLE {ks}.{name}")
    refused(session, f"CREATE TABLE {ks}.{name}x (k int PRIMARY KEY)", CONFIG,
            f"{ks}.{name}x: Table name must not be more than 222 characters long (got 223 characters for "
            f"\"{name}x\")")


def test_counter_tables_are_created(session, ks, tname):
    # A counter table is created as in Cassandra (counters themselves: test_counters.py).
    session.execute(f"CREATE TABLE {ks}.{tname} (k int, x int, s counter static, c counter, PRIMARY KEY (k, x))")
    refused(session, f"ALTER TABLE {ks}.{tname} ADD v int", CONFIG,
            f'{ks}.{tname}: Cannot have a non counter column ("v") in a counter table')


# ---- batches ----

@pytest.fixture(scope="module")
def bt(session, ks):
    session.execute(f"CREATE TABLE {ks}.bt (k int, c int, v text, s int static, m map<int, text>, "
                    "PRIMARY KEY (k, c))")
    session.execute(f"CREATE TABLE {ks}.bt0 (k int PRIMARY KEY, v text) WITH gc_grace_seconds = 0")
    return f"{ks}.bt"


def insert(table, k, c, v, using=""):
    return f"INSERT INTO {table} (k, c, v) VALUES ({k}, {c}, '{v}') {using};"


def test_batch_size_thresholds(session, ks, bt):
    x = "x" * 3000
    # Over batch_size_warn_threshold (5 KiB): applied, with Cassandra's size and warning.
    w = warnings_of(session, f"BEGIN BATCH {insert(bt, 1, 1, x)} {insert(bt, 2, 1, x)} APPLY BATCH")
    assert w == [f"Batch for [{bt}] is of size 6148, exceeding specified threshold of 5120 by 1028."]
    w = warnings_of(session, f"BEGIN BATCH {insert(bt, 1, 1, x)} {insert(bt, 2, 1, x, 'USING TTL 100')} APPLY BATCH")
    assert w == [f"Batch for [{bt}] is of size 6160, exceeding specified threshold of 5120 by 1040."]
    w = warnings_of(session, f"BEGIN BATCH INSERT INTO {bt} (k, c, v, m) VALUES (1, 1, '{x}', {{1: 'a', 2: 'bb'}}); "
                             f"{insert(bt, 2, 1, x[:2180])} APPLY BATCH")
    assert w == [f"Batch for [{bt}] is of size 5391, exceeding specified threshold of 5120 by 271."]
    # One partition: never checked, as in Cassandra.
    assert warnings_of(session, f"BEGIN BATCH {insert(bt, 1, 1, x)} {insert(bt, 1, 2, x)} APPLY BATCH") == []
    # Over batch_size_fail_threshold (50 KiB): refused, nothing written.
    y = "y" * 30000
    refused(session, f"BEGIN BATCH {insert(bt, 7, 1, y)} {insert(bt, 8, 1, y)} APPLY BATCH",
            INVALID, "Batch too large")
    assert tuples(session, f"SELECT k FROM {bt} WHERE k IN (7, 8)") == []


def test_unlogged_and_gc_grace_warnings(session, ks, bt):
    many = " ".join(f"INSERT INTO {bt} (k, c) VALUES ({i}, 1);" for i in range(11))
    w = warnings_of(session, f"BEGIN UNLOGGED BATCH {many} APPLY BATCH")
    assert w == [f"Unlogged batch covering 11 partitions detected against table [{bt}]. "
                 "You should use a logged batch for atomicity, or asynchronous writes for performance."]
    ten = " ".join(f"INSERT INTO {bt} (k, c) VALUES ({i}, 1);" for i in range(10))
    assert warnings_of(session, f"BEGIN UNLOGGED BATCH {ten} APPLY BATCH") == []
    w = warnings_of(session, f"BEGIN BATCH INSERT INTO {ks}.bt0 (k, v) VALUES (1, 'a'); APPLY BATCH")
    assert w == [f"Executing a LOGGED BATCH on table [{ks}.bt0], configured with a gc_grace_seconds of 0. "
                 "The gc_grace_seconds is used to TTL batchlog entries, so setting gc_grace_seconds too low on "
                 "tables involved in an atomic batch might cause batchlog entries to expire before being replayed."]


def test_batch_thresholds_from_the_configuration(node_factory, tmp_root):
    from conftest import make_cluster
    config = tmp_root / "batch.yaml"
    config.write_text("batch_size_warn_threshold_in_kb: 1\nbatch_size_fail_threshold: 2KiB\n"
                      "unlogged_batch_across_partitions_warn_threshold: 2\n")
    node = node_factory("batch-limits", ["--config", str(config)])
    cluster = make_cluster(node)
    try:
        s = cluster.connect()
        s.execute("CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE b.t (k int, c int, v text, PRIMARY KEY (k, c))")
        x = "x" * 600
        w = warnings_of(s, f"BEGIN BATCH {insert('b.t', 1, 1, x)} {insert('b.t', 2, 1, x)} APPLY BATCH")
        assert w == ["Batch for [b.t] is of size 1348, exceeding specified threshold of 1024 by 324."]
        refused(s, f"BEGIN BATCH {insert('b.t', 1, 1, x * 2)} {insert('b.t', 2, 1, x * 2)} APPLY BATCH",
                INVALID, "Batch too large")
        three = " ".join(f"INSERT INTO b.t (k, c) VALUES ({i}, 1);" for i in range(3))
        assert warnings_of(s, f"BEGIN UNLOGGED BATCH {three} APPLY BATCH") == [
            "Unlogged batch covering 3 partitions detected against table [b.t]. "
            "You should use a logged batch for atomicity, or asynchronous writes for performance."]
    finally:
        cluster.shutdown()
