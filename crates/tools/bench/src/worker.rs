//! A worker task: one request at a time from its workload (write, read, delete, scan, mixed),
//! each timed once and recorded in the worker's histogram; reads validated when asked.

use crate::args::{fill_value, parse_go_duration, WorkloadKind};
use crate::shared::{Shared, Statement};
use crate::stats::Kind;
use crate::workload::{Rng, Workload};
use bytes::Bytes;
use cairn_protocol::codec::Reader;
use cairn_protocol::{Opcode, ResultBody, Rows};
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) fn make_workload(sh: &Shared, i: u64) -> Box<dyn Workload> {
    let a = &sh.args;
    let seed = crate::workload::mix(i.wrapping_add(sh.run_start_ns as u64));
    match a.workload {
        WorkloadKind::Sequential => Box::new(crate::workload::Sequential::new(
            i,
            a.concurrency,
            a.partition_count,
            a.clustering_row_count,
            a.partition_offset,
            a.iterations,
        )),
        WorkloadKind::Uniform => Box::new(crate::workload::Uniform::new(
            seed,
            a.partition_count,
            a.clustering_row_count,
            a.partition_offset,
        )),
        WorkloadKind::Timeseries => {
            if sh.mix.iter().any(|(k, _)| *k == Kind::Read) {
                Box::new(crate::workload::TimeseriesRead::new(
                    seed,
                    a.partition_count,
                    a.clustering_row_count,
                    a.partition_offset,
                    sh.run_start_ns,
                    sh.period_ns,
                    a.distribution == "hnormal",
                ))
            } else {
                Box::new(crate::workload::TimeseriesWrite::new(
                    i,
                    a.concurrency,
                    a.partition_count,
                    a.clustering_row_count,
                    a.partition_offset,
                    sh.run_start_ns,
                    sh.period_ns,
                ))
            }
        }
    }
}

/// Token sub-ranges of the Murmur3 ring for scan mode.
pub(crate) fn token_range(i: u64, n: u64) -> (i64, i64) {
    let span = u64::MAX as u128 + 1;
    let lo = (span * i as u128 / n as u128) as i128 + i64::MIN as i128;
    let hi = (span * (i + 1) as u128 / n as u128) as i128 + i64::MIN as i128 - 1;
    (lo as i64, hi as i64)
}

/// Outcome of one request: rows affected, or an error message.
pub(crate) type OpResult = std::result::Result<u64, String>;

pub(crate) async fn worker(sh: Arc<Shared>, i: u64, start: Instant) {
    let a = &sh.args;
    let mut wl = make_workload(&sh, i);
    let mut rng = Rng::new(crate::workload::mix(i ^ 0xA5A5));
    let total_weight: u32 = sh.mix.iter().map(|(_, w)| w).sum();
    let deadline = match parse_go_duration(&a.duration) {
        Ok(d) if !d.is_zero() => Some(start + d),
        _ => None,
    };
    // Per-worker schedule under -max-rate: request k is due at start + k·period.
    let period =
        (a.max_rate > 0).then(|| Duration::from_secs_f64(a.concurrency as f64 / a.max_rate as f64));
    let mut due = start;
    let mut epoch = sh.epoch.load(Ordering::Relaxed);
    let mut values: Vec<(i64, i64, Vec<u8>)> = Vec::new();
    let mut keys: Vec<i64> = Vec::new();
    let mut scan_next = i;
    let mut scan_pass = 0u64;
    let w = i as usize;
    // The previous operation's end: nothing between it and the next send waits, so it also
    // serves as that send's time (one clock read per operation instead of three).
    let mut now = Instant::now();
    loop {
        if sh.stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d) {
            break;
        }
        let kind = if sh.mix.len() == 1 {
            sh.mix[0].0
        } else {
            let mut r = rng.below(total_weight as u64) as u32;
            let mut k = sh.mix[0].0;
            for (kk, w) in &sh.mix {
                if r < *w {
                    k = *kk;
                    break;
                }
                r -= w;
            }
            k
        };
        if kind == Kind::Scan {
            let ranges = a.range_count.max(1);
            if scan_next >= ranges {
                // This worker's share of the ranges is done: one iteration more.
                scan_pass += 1;
                if a.iterations != 0 && scan_pass >= a.iterations {
                    break;
                }
                scan_next %= ranges;
            }
        } else if wl.is_done() {
            break;
        }
        if let Some(p) = period {
            due += p;
            if due > Instant::now() {
                tokio::time::sleep_until(due.into()).await;
            }
            now = Instant::now();
        }
        let sent = now;
        let res: OpResult = match kind {
            Kind::Write => write_op(&sh, w, sent, wl.as_mut(), &mut values).await,
            Kind::Read => read_op(&sh, w, sent, wl.as_mut(), &mut keys).await,
            Kind::Delete => delete_op(&sh, w, sent, wl.as_mut()).await,
            Kind::Scan => {
                let (lo, hi) = token_range(scan_next, a.range_count.max(1));
                scan_next += a.concurrency;
                scan_op(&sh, w, sent, lo, hi).await
            }
        };
        let end = Instant::now();
        now = end;
        // Recorded straight into this worker's slot: one uncontended lock per operation.
        // (Merging per-worker histograms every few ms cost more CPU than the driver.)
        let mut slot = sh.slots[i as usize].lock().unwrap();
        // An operation that began during the warm-up is not counted.
        if sh.epoch.load(Ordering::Relaxed) == epoch {
            match res {
                Ok(rows) => {
                    let raw = (end - sent).as_nanos() as u64;
                    let co = period.map(|_| (end - due.min(sent)).as_nanos() as u64);
                    slot.record(kind, rows, raw, co);
                }
                Err(msg) => {
                    slot.errors += 1;
                    if sh.errors_printed.fetch_add(1, Ordering::Relaxed) < 10 {
                        eprintln!("operation failed: {msg}");
                    }
                }
            }
        }
        drop(slot);
        // There is no reconnection: once every connection is closed nothing can succeed, so
        // end the run instead of failing operations as fast as the workers can loop.
        if sh.client.all_closed() && !sh.lost.swap(true, Ordering::Relaxed) {
            eprintln!("every connection to the nodes is closed: stopping the run");
            sh.stop.store(true, Ordering::Relaxed);
        }
        epoch = sh.epoch.load(Ordering::Relaxed);
    }
}

/// Sends one request (an EXECUTE or BATCH of `stmt`, whose body `encode` writes) on the next
/// connection and waits for its result, within `-timeout` of `sent`. A node that no longer
/// knows the statement (UNPREPARED: it restarted, or evicted it) gets it prepared again on
/// that connection and the request once more, as drivers do.
pub(crate) async fn request(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    stmt: &Statement,
    opcode: Opcode,
    encode: impl Fn(&mut Vec<u8>),
) -> std::result::Result<ResultBody, String> {
    let conn = sh.client.next();
    let compression = sh.client.compression();
    let frame = sh
        .deadlines
        .run(worker, sent, pin!(conn.send(opcode, &encode)))
        .await?;
    match crate::wire::decode_result(frame, compression) {
        Err(e) if e.is_unprepared() => {
            let id = sh
                .deadlines
                .run(worker, sent, pin!(conn.prepare(&stmt.query)))
                .await
                .map_err(|e| format!("{e} (preparing {:?} again)", stmt.query))?;
            if id != stmt.id {
                return Err(format!(
                    "the node prepared {:?} again under another id",
                    stmt.query
                ));
            }
            let frame = sh
                .deadlines
                .run(worker, sent, pin!(conn.send(opcode, &encode)))
                .await?;
            crate::wire::decode_result(frame, compression).map_err(|e| e.to_string())
        }
        r => r.map_err(|e| e.to_string()),
    }
}

pub(crate) async fn write_op(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    wl: &mut dyn Workload,
    values: &mut Vec<(i64, i64, Vec<u8>)>,
) -> OpResult {
    let pk = wl.next_partition_key();
    let n = sh.args.rows_per_request as usize;
    let mut used = 0;
    while used < n {
        if wl.is_partition_done() && used > 0 {
            break;
        }
        let ck = wl.next_clustering_key();
        if values.len() <= used {
            values.push((0, 0, Vec::new()));
        }
        let v = &mut values[used];
        v.0 = pk;
        v.1 = ck;
        fill_value(&mut v.2, sh.row_size, pk, ck);
        used += 1;
        if wl.is_partition_done() {
            break;
        }
    }
    let (id, c) = (&sh.insert.id[..], sh.consistency);
    if sh.args.mode == crate::args::Mode::CounterUpdate {
        // scylla-bench's counter update: c1..c5 += ck, ck + 1, … ck + 4 (one row).
        let (pk, ck) = (values[0].0, values[0].1);
        let adds: [[u8; 8]; 5] = std::array::from_fn(|i| ck.wrapping_add(i as i64).to_be_bytes());
        let (pkb, ckb) = (pk.to_be_bytes(), ck.to_be_bytes());
        let vals: [&[u8]; 7] = [&adds[0], &adds[1], &adds[2], &adds[3], &adds[4], &pkb, &ckb];
        request(sh, worker, sent, &sh.insert, Opcode::Execute, |b| {
            crate::wire::execute_body(b, id, c, &vals, None)
        })
        .await?;
        return Ok(1);
    }
    if n == 1 {
        let (pk, ck, v) = &values[0];
        let (pk, ck) = (pk.to_be_bytes(), ck.to_be_bytes());
        let vals: [&[u8]; 3] = [&pk, &ck, v];
        request(sh, worker, sent, &sh.insert, Opcode::Execute, |b| {
            crate::wire::execute_body(b, id, c, &vals, None)
        })
        .await?;
    } else {
        // An unlogged batch of the rows (fewer when the partition ended early).
        let keys: Vec<([u8; 8], [u8; 8])> = values[..used]
            .iter()
            .map(|(pk, ck, _)| (pk.to_be_bytes(), ck.to_be_bytes()))
            .collect();
        let rows: Vec<[&[u8]; 3]> = keys
            .iter()
            .zip(&values[..used])
            .map(|((pk, ck), (_, _, v))| [&pk[..], &ck[..], v.as_slice()])
            .collect();
        request(sh, worker, sent, &sh.insert, Opcode::Batch, |b| {
            crate::wire::batch_body(b, id, c, &rows)
        })
        .await?;
    }
    Ok(used as u64)
}

/// `keys` is the worker's scratch for `-in-restriction` values (pk, then the clustering keys),
/// reused so that a read allocates nothing of its own.
pub(crate) async fn read_op(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    wl: &mut dyn Workload,
    keys: &mut Vec<i64>,
) -> OpResult {
    let a = &sh.args;
    let pk = wl.next_partition_key();
    let ck = wl.next_clustering_key();
    keys.clear();
    keys.extend([pk, ck]);
    // Sequential reads advance over the rows the request covers.
    if a.workload == WorkloadKind::Sequential || a.in_restriction {
        for _ in 1..a.rows_per_request {
            if wl.is_partition_done() {
                break;
            }
            let k = wl.next_clustering_key();
            if a.in_restriction {
                keys.push(k);
            }
        }
    }
    let rpr = a.rows_per_request as i64;
    let (pk, ck, hi) = (pk.to_be_bytes(), ck.to_be_bytes(), (ck + rpr).to_be_bytes());
    if a.in_restriction {
        // Past the partition's last row: consecutive keys, so there are always rpr markers.
        while keys.len() < rpr as usize + 1 {
            let last = keys[keys.len() - 1];
            keys.push(last + 1);
        }
        let bytes: Vec<[u8; 8]> = keys.iter().map(|k| k.to_be_bytes()).collect();
        let vals: Vec<&[u8]> = bytes.iter().map(|k| &k[..]).collect();
        paged(sh, worker, sent, &sh.read, &vals).await
    } else if a.no_lower_bound {
        paged(sh, worker, sent, &sh.read, &[&pk]).await
    } else if a.provide_upper_bound {
        paged(sh, worker, sent, &sh.read, &[&pk, &ck, &hi]).await
    } else {
        paged(sh, worker, sent, &sh.read, &[&pk, &ck]).await
    }
}

pub(crate) async fn delete_op(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    wl: &mut dyn Workload,
) -> OpResult {
    let pk = wl.next_partition_key();
    let ck = wl.next_clustering_key();
    let n = sh.args.rows_per_request;
    let (id, c) = (&sh.delete.id[..], sh.consistency);
    let (pkb, ckb) = (pk.to_be_bytes(), ck.to_be_bytes());
    if n > 1 {
        for _ in 1..n {
            if wl.is_partition_done() {
                break;
            }
            wl.next_clustering_key();
        }
        let hi = (ck + n as i64).to_be_bytes();
        let vals: [&[u8]; 3] = [&pkb, &ckb, &hi];
        request(sh, worker, sent, &sh.delete, Opcode::Execute, |b| {
            crate::wire::execute_body(b, id, c, &vals, None)
        })
        .await?;
    } else {
        let vals: [&[u8]; 2] = [&pkb, &ckb];
        request(sh, worker, sent, &sh.delete, Opcode::Execute, |b| {
            crate::wire::execute_body(b, id, c, &vals, None)
        })
        .await?;
    }
    Ok(n)
}

pub(crate) async fn scan_op(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    lo: i64,
    hi: i64,
) -> OpResult {
    let (lo, hi) = (lo.to_be_bytes(), hi.to_be_bytes());
    paged(sh, worker, sent, &sh.scan, &[&lo, &hi]).await
}

/// Executes a prepared read page by page; counts (and with -validate-data checks) the rows.
/// Each page is one request, with its own `-timeout`.
pub(crate) async fn paged(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    stmt: &Statement,
    vals: &[&[u8]],
) -> OpResult {
    let mut state: Option<Bytes> = None;
    let mut rows = 0u64;
    let mut page_sent = sent;
    let c = sh.consistency;
    loop {
        let page = crate::wire::Page {
            size: sh.args.page_size.max(1),
            state: state.as_deref(),
            skip_metadata: sh.args.skip_metadata,
        };
        let res = request(sh, worker, page_sent, stmt, Opcode::Execute, |b| {
            crate::wire::execute_body(b, &stmt.id, c, vals, Some(page))
        })
        .await?;
        let ResultBody::Rows(res) = res else {
            return Err(format!("{:?} returned no rows result", stmt.query));
        };
        rows += res.rows_count as u64;
        if sh.args.validate_data {
            validate(sh, &res)?;
        }
        match res.paging_state {
            None => break,
            Some(s) => state = Some(s),
        }
        page_sent = Instant::now();
    }
    Ok(rows)
}

/// Checks each row's value against the one derived from its (pk, ck). The rows are read
/// with the statement's columns, pk bigint, ck bigint, v blob, whether or not the node sent
/// their metadata.
pub(crate) fn validate(sh: &Shared, rows: &Rows) -> std::result::Result<(), String> {
    if rows.column_count != 3 {
        return Err(format!(
            "a row of {} columns, expected 3 (pk, ck, v)",
            rows.column_count
        ));
    }
    let bad = |e: String| format!("undecodable row: {e}");
    let bigint = |b: Option<Bytes>| -> std::result::Result<i64, String> {
        let b = b.ok_or("null key")?;
        let a: [u8; 8] = b[..]
            .try_into()
            .map_err(|_| format!("a bigint of {} bytes", b.len()))?;
        Ok(i64::from_be_bytes(a))
    };
    let mut r = Reader::new(rows.rows_content.clone());
    let mut expected = Vec::new();
    for _ in 0..rows.rows_count {
        let pk = bigint(r.read_bytes().map_err(|e| bad(e.to_string()))?).map_err(bad)?;
        let ck = bigint(r.read_bytes().map_err(|e| bad(e.to_string()))?).map_err(bad)?;
        let v = r
            .read_bytes()
            .map_err(|e| bad(e.to_string()))?
            .unwrap_or_default();
        fill_value(&mut expected, sh.row_size, pk, ck);
        if v[..] != expected[..] {
            return Err(if v.len() == expected.len() {
                format!("data corruption in pk({pk}), ck({ck}): content differs")
            } else {
                format!(
                    "data corruption in pk({pk}), ck({ck}): {} bytes read, {} expected",
                    v.len(),
                    expected.len()
                )
            });
        }
    }
    Ok(())
}
