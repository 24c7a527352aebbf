"""The differential tester: random CQL against Cairn and Apache Cassandra 5.0, compared.

Modules: peer (the Cassandra process; standard library only, imported by
scripts/cassandra-peer before any virtualenv exists), types (CQL types and values), schema
(the table model), stmt (a generated statement), gen (the generator), servers (Cairn's
process and the driver sessions), compare (when two answers are the same), case (replays
and regression files), shrink, runner (the command line).
"""
