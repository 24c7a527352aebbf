//! Golden-byte and round-trip tests of the message encodings.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::codec::*;
use crate::compression::Compression;
use crate::frame::{FrameDecoder, FrameHeader, Opcode};
use crate::types::{ColumnSpec, ColumnType, TableSpec};
use bytes::Bytes;
use bytes::BytesMut;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

fn s(x: &str) -> String {
    x.to_string()
}

/// Builds expected bytes from pieces.
fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn string(x: &str) -> Vec<u8> {
    let mut v = (x.len() as u16).to_be_bytes().to_vec();
    v.extend_from_slice(x.as_bytes());
    v
}

#[test]
fn ready_frame_golden() {
    let f = Reply::from(Response::Ready).encode_frame(4, 5, None);
    assert_eq!(f, [0x84, 0, 0, 5, 0x02, 0, 0, 0, 0]);
    // Never compressed when empty.
    let f = Reply::from(Response::Ready).encode_frame(4, 5, Some(Compression::Lz4));
    assert_eq!(f, [0x84, 0, 0, 5, 0x02, 0, 0, 0, 0]);
}

#[test]
fn supported_frame_golden() {
    let r = Response::Supported(vec![
        (s("CQL_VERSION"), vec![s("3.4.5")]),
        (s("COMPRESSION"), vec![s("lz4"), s("snappy")]),
    ]);
    let f = Reply::from(r.clone()).encode_frame(4, 0, None);
    let body = cat(&[
        &[0, 2],
        &string("CQL_VERSION"),
        &[0, 1],
        &string("3.4.5"),
        &string("COMPRESSION"),
        &[0, 2],
        &string("lz4"),
        &string("snappy"),
    ]);
    let mut expected = vec![0x84, 0, 0, 0, 0x06];
    expected.extend_from_slice(&(body.len() as u32).to_be_bytes());
    expected.extend_from_slice(&body);
    assert_eq!(f, expected);
    round_trip_response(&r, 4);
}

#[test]
fn error_frames_golden() {
    let e = CqlError::new(
        ErrorKind::AlreadyExists {
            keyspace: s("ks"),
            table: s("t"),
        },
        "Cannot add already existing table \"t\" to keyspace \"ks\"",
    );
    let mut body = Vec::new();
    Response::Error(e.clone()).encode_body(4, &mut body);
    assert_eq!(
        body,
        cat(&[
            &[0, 0, 0x24, 0],
            &string(&e.message),
            &string("ks"),
            &string("t")
        ])
    );
    let u = CqlError::new(
        ErrorKind::Unavailable {
            consistency: Consistency::Quorum,
            required: 2,
            alive: 1,
        },
        "x",
    );
    let mut body = Vec::new();
    Response::Error(u).encode_body(4, &mut body);
    assert_eq!(
        body,
        [0, 0, 0x10, 0, 0, 1, b'x', 0, 4, 0, 0, 0, 2, 0, 0, 0, 1]
    );
    let f =
        Reply::from(CqlError::syntax("line 1:0 no viable alternative")).encode_frame(4, 9, None);
    assert_eq!(&f[..5], &[0x84, 0, 0, 9, 0x00]);
    assert_eq!(&f[9..13], &[0, 0, 0x20, 0]);
    let up = CqlError::unprepared(Bytes::from_static(&[0xab, 0xcd]));
    let mut body = Vec::new();
    Response::Error(up.clone()).encode_body(4, &mut body);
    assert_eq!(&body[..4], &[0, 0, 0x25, 0]);
    assert_eq!(&body[body.len() - 4..], &[0, 2, 0xab, 0xcd]);
    assert!(up.message.contains("abcd"));
}

#[test]
fn error_codes_match_cassandra() {
    let codes = [
        (ErrorCode::ServerError, 0x0000),
        (ErrorCode::ProtocolError, 0x000A),
        (ErrorCode::BadCredentials, 0x0100),
        (ErrorCode::Unavailable, 0x1000),
        (ErrorCode::Overloaded, 0x1001),
        (ErrorCode::IsBootstrapping, 0x1002),
        (ErrorCode::TruncateError, 0x1003),
        (ErrorCode::WriteTimeout, 0x1100),
        (ErrorCode::ReadTimeout, 0x1200),
        (ErrorCode::ReadFailure, 0x1300),
        (ErrorCode::FunctionFailure, 0x1400),
        (ErrorCode::WriteFailure, 0x1500),
        (ErrorCode::SyntaxError, 0x2000),
        (ErrorCode::Unauthorized, 0x2100),
        (ErrorCode::Invalid, 0x2200),
        (ErrorCode::ConfigError, 0x2300),
        (ErrorCode::AlreadyExists, 0x2400),
        (ErrorCode::Unprepared, 0x2500),
    ];
    for (c, n) in codes {
        assert_eq!(c.code(), n);
        assert_eq!(ErrorCode::from_code(n), Some(c));
    }
}

#[test]
fn all_error_kinds_round_trip_and_v3_downgrades() {
    let cl = Consistency::LocalQuorum;
    let kinds = vec![
        ErrorKind::Server,
        ErrorKind::Protocol,
        ErrorKind::BadCredentials,
        ErrorKind::Unavailable {
            consistency: cl,
            required: 3,
            alive: 1,
        },
        ErrorKind::Overloaded,
        ErrorKind::IsBootstrapping,
        ErrorKind::TruncateError,
        ErrorKind::WriteTimeout {
            consistency: cl,
            received: 1,
            block_for: 2,
            write_type: WriteType::UnloggedBatch,
        },
        ErrorKind::ReadTimeout {
            consistency: cl,
            received: 1,
            block_for: 2,
            data_present: true,
        },
        ErrorKind::ReadFailure {
            consistency: cl,
            received: 1,
            block_for: 2,
            num_failures: 1,
            data_present: false,
        },
        ErrorKind::FunctionFailure {
            keyspace: s("ks"),
            function: s("f"),
            arg_types: vec![s("int")],
        },
        ErrorKind::WriteFailure {
            consistency: cl,
            received: 0,
            block_for: 1,
            num_failures: 1,
            write_type: WriteType::Simple,
        },
        ErrorKind::SyntaxError,
        ErrorKind::Unauthorized,
        ErrorKind::Invalid,
        ErrorKind::ConfigError,
        ErrorKind::AlreadyExists {
            keyspace: s("ks"),
            table: s(""),
        },
        ErrorKind::Unprepared {
            id: Bytes::from_static(b"0123456789abcdef"),
        },
    ];
    for k in kinds {
        let r = Response::Error(CqlError::new(k.clone(), "msg"));
        round_trip_response(&r, 4);
        let mut body = Vec::new();
        r.encode_body(3, &mut body);
        let back = Response::decode(Opcode::Error, 3, Bytes::from(body)).unwrap();
        let Response::Error(back) = back else {
            panic!()
        };
        let expected = match k {
            ErrorKind::ReadFailure { .. } => ErrorCode::ReadTimeout,
            ErrorKind::WriteFailure { .. } => ErrorCode::WriteTimeout,
            ErrorKind::FunctionFailure { .. } => ErrorCode::Invalid,
            other => other.code(),
        };
        assert_eq!(back.code(), expected);
    }
}

/// A QUERY with every flag, written out byte by byte.
fn golden_query_body() -> Vec<u8> {
    cat(&[
        &[0, 0, 0, 8],
        b"SELECT ?",
        &[0, 6], // LOCAL_QUORUM
        &[0x7f], // all flags
        &[0, 3], // 3 values
        &string("a"),
        &[0, 0, 0, 2, 0xbe, 0xef],
        &string("b"),
        &[0xff, 0xff, 0xff, 0xff], // null
        &string("c"),
        &[0xff, 0xff, 0xff, 0xfe], // unset
        &[0, 0, 0x13, 0x88],       // page size 5000
        &[0, 0, 0, 3, 1, 2, 3],    // paging state
        &[0, 9],                   // LOCAL_SERIAL
        &1_700_000_000_000_000i64.to_be_bytes(),
    ])
}

#[test]
fn query_with_every_flag_golden() {
    let body = golden_query_body();
    let req = Request::decode(Opcode::Query, Bytes::from(body.clone())).unwrap();
    let Request::Query(q) = &req else { panic!() };
    assert_eq!(q.query, "SELECT ?");
    let p = &q.params;
    assert_eq!(p.consistency, Consistency::LocalQuorum);
    assert_eq!(
        p.values,
        vec![
            Value::Bytes(Bytes::from_static(&[0xbe, 0xef])),
            Value::Null,
            Value::Unset
        ]
    );
    assert_eq!(p.names, Some(vec![s("a"), s("b"), s("c")]));
    assert!(p.skip_metadata);
    assert_eq!(p.page_size, Some(5000));
    assert_eq!(p.paging_state.as_deref(), Some(&[1u8, 2, 3][..]));
    assert_eq!(p.serial_consistency, Some(Consistency::LocalSerial));
    assert_eq!(p.default_timestamp, Some(1_700_000_000_000_000));
    let mut again = Vec::new();
    req.encode_body(&mut again);
    assert_eq!(again, body);
    // Every truncation is an error, never a panic.
    for cut in 0..body.len() {
        assert!(Request::decode(Opcode::Query, Bytes::copy_from_slice(&body[..cut])).is_err());
    }
}

#[test]
fn simple_query_golden() {
    // What drivers send for `SELECT * FROM system.local` at ONE with page size 5000.
    let req = Request::Query(Query {
        query: s("SELECT * FROM system.local"),
        params: QueryParams {
            page_size: Some(5000),
            ..QueryParams::new(Consistency::One)
        },
    });
    let f = req.encode_frame(4, 1, None);
    let body = cat(&[
        &[0, 0, 0, 26],
        b"SELECT * FROM system.local",
        &[0, 1, 0x04, 0, 0, 0x13, 0x88],
    ]);
    let mut expected = vec![0x04, 0, 0, 1, 0x07];
    expected.extend_from_slice(&(body.len() as u32).to_be_bytes());
    expected.extend_from_slice(&body);
    assert_eq!(f, expected);
}

fn round_trip_request(req: &Request) {
    let f = req.encode_frame(4, 3, None);
    let mut buf = BytesMut::from(&f[..]);
    let frame = FrameDecoder::default().decode(&mut buf).unwrap().unwrap();
    let back = RequestFrame::decode(&frame.header, frame.body).unwrap();
    assert_eq!(&back.request, req);
    assert_eq!(back.stream, 3);
    for c in [Compression::Lz4, Compression::Snappy] {
        let f = req.encode_frame(4, 3, Some(c));
        let mut buf = BytesMut::from(&f[..]);
        let frame = FrameDecoder::default().decode(&mut buf).unwrap().unwrap();
        let body = if frame.header.flags & crate::frame::flags::COMPRESSION != 0 {
            Bytes::from(c.decompress(&frame.body, 1 << 20).unwrap())
        } else {
            frame.body
        };
        assert_eq!(
            &RequestFrame::decode(&frame.header, body).unwrap().request,
            req
        );
    }
}

fn sample_requests() -> Vec<Request> {
    vec![
        Request::Options,
        Request::Startup(Startup {
            options: vec![(s("CQL_VERSION"), s("3.0.0")), (s("COMPRESSION"), s("lz4"))],
        }),
        Request::AuthResponse(Some(Bytes::from_static(b"\0cassandra\0cassandra"))),
        Request::AuthResponse(None),
        Request::Prepare(Prepare {
            query: s("INSERT INTO t (a, b) VALUES (?, ?)"),
        }),
        Request::Execute(Execute {
            id: Bytes::from_static(&[1; 16]),
            params: QueryParams {
                values: vec![Value::Bytes(Bytes::from_static(b"\0\0\0\x01")), Value::Null],
                skip_metadata: true,
                page_size: Some(100),
                ..QueryParams::new(Consistency::LocalOne)
            },
        }),
        Request::Batch(Batch {
            batch_type: BatchType::Unlogged,
            statements: vec![
                BatchStatement {
                    query: BatchQuery::Query(s("INSERT INTO t (a) VALUES (1)")),
                    values: vec![],
                    names: None,
                },
                BatchStatement {
                    query: BatchQuery::Prepared(Bytes::from_static(&[7; 16])),
                    values: vec![Value::Unset, Value::Bytes(Bytes::from_static(b"x"))],
                    names: None,
                },
            ],
            consistency: Consistency::Quorum,
            serial_consistency: Some(Consistency::Serial),
            default_timestamp: Some(42),
        }),
        Request::Batch(Batch {
            batch_type: BatchType::Counter,
            statements: vec![BatchStatement {
                query: BatchQuery::Query(s("UPDATE c SET n = n + ? WHERE k = ?")),
                values: vec![Value::Null, Value::Null],
                names: Some(vec![s("n"), s("k")]),
            }],
            consistency: Consistency::One,
            serial_consistency: None,
            default_timestamp: None,
        }),
        Request::Register(vec![
            EventType::TopologyChange,
            EventType::StatusChange,
            EventType::SchemaChange,
        ]),
    ]
}

#[test]
fn requests_round_trip() {
    for r in sample_requests() {
        round_trip_request(&r);
    }
}

#[test]
fn batch_golden() {
    let body = cat(&[
        &[1],    // unlogged
        &[0, 1], // one statement
        &[0],
        &[0, 0, 0, 3],
        b"Q;?",
        &[0, 1, 0, 0, 0, 1, 9],
        &[0, 1], // ONE
        &[0x20], // default timestamp
        &7i64.to_be_bytes(),
    ]);
    let Request::Batch(b) = Request::decode(Opcode::Batch, Bytes::from(body)).unwrap() else {
        panic!()
    };
    assert_eq!(b.batch_type, BatchType::Unlogged);
    assert_eq!(b.statements[0].query, BatchQuery::Query(s("Q;?")));
    assert_eq!(
        b.statements[0].values,
        vec![Value::Bytes(Bytes::from_static(&[9]))]
    );
    assert_eq!(b.default_timestamp, Some(7));
}

#[test]
fn register_rejects_unknown_event_types() {
    let mut body = Vec::new();
    write_string_list(&mut body, &["SCHEMA_CHANGE", "NOPE"]);
    assert!(Request::decode(Opcode::Register, Bytes::from(body)).is_err());
}

fn round_trip_response(r: &Response, version: u8) {
    let f = Reply::from(r.clone()).encode_frame(version, 1, None);
    let mut hb = [0u8; 9];
    hb.copy_from_slice(&f[..9]);
    let header = FrameHeader::parse(&hb);
    assert!(header.is_response);
    assert_eq!(header.length as usize, f.len() - 9);
    let back =
        Reply::decode_frame(&header, Bytes::copy_from_slice(&f[9..]), None, 1 << 20).unwrap();
    assert_eq!(&back.response, r);
    for c in [Compression::Lz4, Compression::Snappy] {
        let f = Reply::from(r.clone()).encode_frame(version, 1, Some(c));
        hb.copy_from_slice(&f[..9]);
        let header = FrameHeader::parse(&hb);
        let back = Reply::decode_frame(&header, Bytes::copy_from_slice(&f[9..]), Some(c), 1 << 20)
            .unwrap();
        assert_eq!(&back.response, r);
    }
}

fn users_metadata() -> Arc<ResultMetadata> {
    Arc::new(ResultMetadata::for_table(
        TableSpec::new("ks", "users"),
        vec![
            (s("id"), ColumnType::Uuid),
            (s("name"), ColumnType::Varchar),
            (
                s("tags"),
                ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(ColumnType::Int)),
            ),
        ],
    ))
}

#[test]
fn rows_golden_and_round_trip() {
    let md = Arc::new(ResultMetadata::for_table(
        TableSpec::new("k", "t"),
        vec![(s("a"), ColumnType::Int)],
    ));
    let mut b = RowsBuilder::new(1);
    b.push(Some(&[0, 0, 0, 7]));
    b.push(None);
    let rows = b.finish(md).unwrap();
    assert_eq!(rows.rows_count, 2);
    let mut body = Vec::new();
    Response::Result(ResultBody::Rows(rows.clone())).encode_body(4, &mut body);
    assert_eq!(
        body,
        cat(&[
            &[0, 0, 0, 2],
            &[0, 0, 0, 1], // global table spec
            &[0, 0, 0, 1], // one column
            &string("k"),
            &string("t"),
            &string("a"),
            &[0, 9],
            &[0, 0, 0, 2],
            &[0, 0, 0, 4, 0, 0, 0, 7],
            &[0xff, 0xff, 0xff, 0xff],
        ])
    );
    round_trip_response(&Response::Result(ResultBody::Rows(rows.clone())), 4);
    let cells = rows.decode_rows().unwrap();
    assert_eq!(cells[0][0].as_deref(), Some(&[0u8, 0, 0, 7][..]));
    assert_eq!(cells[1][0], None);

    // No metadata + more pages.
    let mut paged = rows;
    paged.no_metadata = true;
    paged.paging_state = Some(Bytes::from_static(b"p"));
    let mut body = Vec::new();
    Response::Result(ResultBody::Rows(paged.clone())).encode_body(4, &mut body);
    assert_eq!(
        &body[..17],
        &[0, 0, 0, 2, 0, 0, 0, 6, 0, 0, 0, 1, 0, 0, 0, 1, b'p']
    );
    let back = Response::decode(Opcode::Result, 4, Bytes::from(body)).unwrap();
    let Response::Result(ResultBody::Rows(back)) = back else {
        panic!()
    };
    assert_eq!(back.column_count, 1);
    assert!(back.no_metadata);
    assert_eq!(back.decode_rows().unwrap().len(), 2);
}

#[test]
fn rows_builder_rejects_ragged_rows() {
    let mut b = RowsBuilder::new(3);
    b.push(None);
    assert!(b.finish(users_metadata()).is_err());
}

#[test]
fn per_column_table_specs_round_trip() {
    let md = ResultMetadata {
        global_table_spec: None,
        columns: vec![
            ColumnSpec::new(TableSpec::new("a", "x"), "c1", ColumnType::Blob),
            ColumnSpec::new(TableSpec::new("b", "y"), "c2", ColumnType::Boolean),
        ],
    };
    let rows = RowsBuilder::new(2).finish(Arc::new(md)).unwrap();
    round_trip_response(&Response::Result(ResultBody::Rows(rows)), 4);
}

#[test]
fn prepared_golden_v4_and_v3() {
    let p = Prepared {
        id: Bytes::from_static(&[0xaa, 0xbb]),
        metadata: PreparedMetadata {
            global_table_spec: Some(TableSpec::new("k", "t")),
            pk_indexes: vec![0],
            columns: vec![ColumnSpec::new(
                TableSpec::new("k", "t"),
                "a",
                ColumnType::Int,
            )],
        },
        result_metadata: Arc::new(ResultMetadata::default()),
    };
    let r = Response::Result(ResultBody::Prepared(p.clone()));
    let mut body = Vec::new();
    r.encode_body(4, &mut body);
    assert_eq!(
        body,
        cat(&[
            &[0, 0, 0, 4],
            &[0, 2, 0xaa, 0xbb],
            &[0, 0, 0, 1],
            &[0, 0, 0, 1],
            &[0, 0, 0, 1, 0, 0], // pk count 1, index 0
            &string("k"),
            &string("t"),
            &string("a"),
            &[0, 9],
            &[0, 0, 0, 4, 0, 0, 0, 0], // result metadata: no metadata, 0 columns
        ])
    );
    round_trip_response(&r, 4);
    let mut v3 = Vec::new();
    r.encode_body(3, &mut v3);
    assert_eq!(v3.len(), body.len() - 6, "v3 has no pk indexes");
    let with_result = Response::Result(ResultBody::Prepared(Prepared {
        result_metadata: users_metadata(),
        ..p
    }));
    round_trip_response(&with_result, 4);
}

#[test]
fn set_keyspace_void_schema_change_events() {
    let mut body = Vec::new();
    Response::Result(ResultBody::SetKeyspace(s("ks"))).encode_body(4, &mut body);
    assert_eq!(body, cat(&[&[0, 0, 0, 3], &string("ks")]));
    let mut body = Vec::new();
    Response::Result(ResultBody::Void).encode_body(4, &mut body);
    assert_eq!(body, [0, 0, 0, 1]);

    let sc = SchemaChange {
        change: SchemaChangeType::Created,
        target: SchemaChangeTarget::Table {
            keyspace: s("ks"),
            table: s("t"),
        },
    };
    let mut body = Vec::new();
    Response::Result(ResultBody::SchemaChange(sc.clone())).encode_body(4, &mut body);
    assert_eq!(
        body,
        cat(&[
            &[0, 0, 0, 5],
            &string("CREATED"),
            &string("TABLE"),
            &string("ks"),
            &string("t")
        ])
    );
    let f = Reply::from(Response::Event(Event::SchemaChange(sc.clone()))).encode_frame(4, -1, None);
    assert_eq!(&f[..5], &[0x84, 0, 0xff, 0xff, 0x0C]);
    assert_eq!(&f[9..24], &string("SCHEMA_CHANGE")[..]);

    let func = SchemaChange {
        change: SchemaChangeType::Dropped,
        target: SchemaChangeTarget::Function {
            keyspace: s("ks"),
            name: s("f"),
            arg_types: vec![s("int"), s("text")],
        },
    };
    let all = vec![
        Response::Result(ResultBody::SchemaChange(sc)),
        Response::Result(ResultBody::SchemaChange(func.clone())),
        Response::Result(ResultBody::SchemaChange(SchemaChange {
            change: SchemaChangeType::Updated,
            target: SchemaChangeTarget::Type {
                keyspace: s("ks"),
                name: s("addr"),
            },
        })),
        Response::Result(ResultBody::SchemaChange(SchemaChange {
            change: SchemaChangeType::Dropped,
            target: SchemaChangeTarget::Keyspace { keyspace: s("ks") },
        })),
        Response::Result(ResultBody::SchemaChange(SchemaChange {
            change: SchemaChangeType::Created,
            target: SchemaChangeTarget::Aggregate {
                keyspace: s("ks"),
                name: s("agg"),
                arg_types: vec![],
            },
        })),
        Response::Event(Event::TopologyChange {
            change: TopologyChangeType::NewNode,
            address: "127.0.0.2:9042".parse().unwrap(),
        }),
        Response::Event(Event::StatusChange {
            change: StatusChangeType::Down,
            address: "[::1]:9042".parse().unwrap(),
        }),
        Response::Authenticate(s("org.apache.cassandra.auth.PasswordAuthenticator")),
        Response::AuthChallenge(Some(Bytes::from_static(b"c"))),
        Response::AuthSuccess(None),
        Response::Ready,
    ];
    for r in &all {
        round_trip_response(r, 4);
    }
    // v3: function changes become UPDATED KEYSPACE.
    let mut body = Vec::new();
    Response::Result(ResultBody::SchemaChange(func)).encode_body(3, &mut body);
    assert_eq!(
        body,
        cat(&[
            &[0, 0, 0, 5],
            &string("UPDATED"),
            &string("KEYSPACE"),
            &string("ks")
        ])
    );
}

#[test]
fn warnings_and_tracing_are_framed() {
    let reply = Reply {
        response: Response::Result(ResultBody::Void),
        warnings: vec![s("careful")],
        tracing_id: Some([9; 16]),
    };
    let f = reply.encode_frame(4, 2, None);
    assert_eq!(f[1], 0x02 | 0x08);
    assert_eq!(&f[9..25], &[9; 16]);
    let mut hb = [0u8; 9];
    hb.copy_from_slice(&f[..9]);
    let back = Reply::decode_frame(
        &FrameHeader::parse(&hb),
        Bytes::copy_from_slice(&f[9..]),
        None,
        1024,
    )
    .unwrap();
    assert_eq!(back, reply);
    // v3 has no warnings.
    let f3 = reply.encode_frame(3, 2, None);
    assert_eq!(f3[1], 0x02);
}

#[test]
fn custom_payload_is_read_before_the_body() {
    let mut body = Vec::new();
    write_bytes_map(&mut body, &[("k", Some(Bytes::from_static(b"v")))]);
    Request::Options.encode_body(&mut body);
    let header = FrameHeader {
        version: 4,
        is_response: false,
        flags: crate::frame::flags::CUSTOM_PAYLOAD,
        stream: 0,
        opcode: Opcode::Options as u8,
        length: body.len() as u32,
    };
    let rf = RequestFrame::decode(&header, Bytes::from(body)).unwrap();
    assert_eq!(rf.custom_payload.unwrap()[0].0, "k");
    assert_eq!(rf.request, Request::Options);
}

#[test]
fn random_mutations_of_requests_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let mut bodies: Vec<(Opcode, Vec<u8>)> = sample_requests()
        .iter()
        .map(|r| {
            let mut b = Vec::new();
            r.encode_body(&mut b);
            (r.opcode(), b)
        })
        .collect();
    bodies.push((Opcode::Query, golden_query_body()));
    let opcodes = [
        Opcode::Startup,
        Opcode::Options,
        Opcode::Query,
        Opcode::Prepare,
        Opcode::Execute,
        Opcode::Batch,
        Opcode::Register,
        Opcode::AuthResponse,
    ];
    for _ in 0..20_000 {
        let (op, base) = &bodies[rng.gen_range(0..bodies.len())];
        let mut m = base.clone();
        for _ in 0..rng.gen_range(1..4) {
            match rng.gen_range(0..4) {
                0 if !m.is_empty() => {
                    let i = rng.gen_range(0..m.len());
                    m[i] = rng.gen();
                }
                1 if !m.is_empty() => m.truncate(rng.gen_range(0..m.len())),
                2 => {
                    let i = rng.gen_range(0..=m.len());
                    m.insert(i, rng.gen());
                }
                _ => m = (0..rng.gen_range(0..40)).map(|_| rng.gen()).collect(),
            }
        }
        let op = if rng.gen_bool(0.2) {
            opcodes[rng.gen_range(0..opcodes.len())]
        } else {
            *op
        };
        let _ = Request::decode(op, Bytes::from(m.clone()));
        for resp_op in [
            Opcode::Result,
            Opcode::Error,
            Opcode::Event,
            Opcode::Supported,
        ] {
            let _ = Response::decode(resp_op, 4, Bytes::from(m.clone()));
        }
    }
}
