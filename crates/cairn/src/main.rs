//! The `cairn` binary: the CQL server (`serve`) and measurement labs (`lab ...`).

mod nodetool;

/// jemalloc: faster than glibc malloc on the write path's many small allocations.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cairn", about = "Cairn: a CQL database")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a node (storage engine, CQL server, REST admin API, Prometheus metrics).
    Serve(ServeArgs),
    /// Administer a running node over its REST API, with nodetool's commands and output.
    Nodetool(nodetool::NodetoolArgs),
    /// CQL load generator with scylla-bench's flags and output (single-dash flags accepted).
    Bench(Box<cairn_bench::BenchArgs>),
    /// Measurement labs that write CSV, markdown and charts.
    Lab {
        #[command(subcommand)]
        lab: cairn_lab::LabCommand,
    },
}

/// Arguments of `cairn serve`: each flag overrides the configuration file.
#[derive(Args, Debug)]
struct ServeArgs {
    /// YAML configuration (cassandra.yaml / scylla.yaml key names); without it the embedded
    /// defaults apply: loopback addresses, data under ./data.
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Directory holding data/ and commitlog/ (overrides workdir, data_file_directories
    /// and commitlog_directory).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<std::path::PathBuf>,
    /// CQL native protocol port (native_transport_port, default 9042).
    #[arg(long, value_name = "N")]
    native_port: Option<u16>,
    /// REST admin API port (api_port, default 10000).
    #[arg(long, value_name = "N")]
    api_port: Option<u16>,
    /// Prometheus metrics port (prometheus_port, default 9180).
    #[arg(long, value_name = "N")]
    metrics_port: Option<u16>,
    /// Address for every listener and for system.local (listen_address, rpc_address,
    /// api_address, prometheus_address).
    #[arg(long, value_name = "ADDR")]
    listen_address: Option<String>,
}

/// Starts a node: configuration → storage engine (recovered) → CQL and REST listeners, then runs
/// until Ctrl-C or SIGTERM and shuts down cleanly (listeners closed, compactions stopped,
/// flush threads joined, commitlog synced). Acknowledged writes are in the commitlog, so
/// even SIGKILL loses nothing.
fn serve(args: ServeArgs) -> anyhow::Result<()> {
    use cairn_server::config::{Config, Overrides};

    let overrides = Overrides {
        config: args.config,
        data_dir: args.data_dir,
        native_port: args.native_port,
        api_port: args.api_port,
        metrics_port: args.metrics_port,
        listen_address: args.listen_address,
    };
    let loaded = match Config::resolve(&overrides) {
        Ok(l) => l,
        Err(e) => {
            // Every problem with its line, without a backtrace: this is the user's input.
            eprintln!("cairn: {e}");
            std::process::exit(1);
        }
    };
    for w in &loaded.warnings {
        tracing::warn!("{w}");
    }
    let cfg = loaded.config;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("cairn-net")
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let node = cairn_server::start_node(&cfg).await?;
        let r = node.db.recovery_report();
        println!(
            "cairn: storage engine open at {} ({} tables, {} mutations replayed from {} commitlog segments).",
            cfg.data_dir().display(),
            node.db.tables().len(),
            r.mutations_replayed,
            r.replay.segments
        );
        for p in &r.replay.problems {
            println!("cairn: commitlog replay: {}", p.to_error());
        }
        println!("cairn: CQL on {}", node.cql.local_addr());
        println!("cairn: REST API on http://{}", node.rest.local_addr());
        println!(
            "cairn: Prometheus metrics on http://{}/metrics",
            node.metrics.local_addr()
        );
        shutdown_signal().await;
        println!("cairn: shutting down.");
        let db = std::sync::Arc::clone(&node.db);
        node.shutdown().await;
        // Flush threads and compactions stop, the commitlog syncs, when the engine closes.
        tokio::task::spawn_blocking(move || drop(db)).await?;
        anyhow::Ok(())
    })?;
    println!("cairn: stopped.");
    Ok(())
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse_from(cairn_bench::normalize_args(std::env::args_os()));
    // The driver's INFO lines would interleave with the bench's per-second table and the
    // cache lab's progress lines.
    let level = match cli.command {
        Command::Bench(_)
        | Command::Lab {
            lab: cairn_lab::LabCommand::Cache(_),
        } => tracing::Level::WARN,
        _ => tracing::Level::INFO,
    };
    // openraft logs every vote and replication step at INFO; its warnings are what an
    // operator needs (membership logs the group's own milestones) — except its replication's:
    // while a member is down it logs four lines every half second for it (liveness reports the
    // node DOWN once).
    let filter = tracing_subscriber::EnvFilter::new(format!(
        "{level},openraft=warn,openraft::replication=off,\
         openraft::engine::handler::replication_handler=off"
    ));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Nodetool(args) => std::process::exit(nodetool::run(args)),
        Command::Bench(args) => cairn_bench::run(*args),
        Command::Lab { lab } => cairn_lab::run(lab),
    }
}
