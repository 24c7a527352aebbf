//! The `cairn` binary: the CQL server (`serve`) and measurement labs (`lab ...`).

mod lab;

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
    /// Run the CQL server.
    Serve(ServeArgs),
    /// Measurement labs that write CSV, markdown and charts.
    Lab {
        #[command(subcommand)]
        lab: lab::LabCommand,
    },
}

/// Arguments of `cairn serve`.
#[derive(Args, Debug)]
struct ServeArgs {
    /// Directory for data and commitlog.
    #[arg(long, default_value = "data")]
    data_dir: std::path::PathBuf,
    /// CQL native protocol port (reserved; CQL is not served yet).
    #[arg(long, default_value_t = 9042)]
    native_port: u16,
    /// REST admin API port (reserved).
    #[arg(long, default_value_t = 10000)]
    api_port: u16,
    /// Prometheus metrics port (reserved).
    #[arg(long, default_value_t = 9180)]
    metrics_port: u16,
    /// Require password authentication (`authenticator: PasswordAuthenticator`).
    #[arg(long)]
    password_authentication: bool,
}

/// Starts a node: opens (and recovers) the storage engine, loads the schema and serves CQL
/// on 127.0.0.1 until Ctrl-C. Acknowledged writes are in the commitlog, so stopping with
/// Ctrl-C or SIGKILL loses nothing.
fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let cfg = cairn_server::NodeConfig {
        data_dir: args.data_dir,
        native_port: args.native_port,
        api_port: args.api_port,
        metrics_port: args.metrics_port,
        password_authentication: args.password_authentication,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let node = cairn_server::start_node(&cfg, std::net::Ipv4Addr::LOCALHOST.into()).await?;
        let r = node.db.recovery_report();
        println!(
            "cairn: storage engine open at {} ({} tables, {} mutations replayed from {} commitlog segments).",
            cfg.data_dir.display(),
            node.db.tables().len(),
            r.mutations_replayed,
            r.replay.segments
        );
        for p in &r.replay.problems {
            println!("cairn: commitlog replay: {}", p.to_error());
        }
        println!("cairn: CQL on {}", node.cql.local_addr());
        tokio::signal::ctrl_c().await?;
        println!("cairn: stopping");
        node.cql.shutdown().await;
        anyhow::Ok(())
    })
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Lab { lab } => lab::run(lab),
    }
}
