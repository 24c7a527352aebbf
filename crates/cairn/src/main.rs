//! The `cairn` binary: the CQL server (`serve`) and measurement labs (`lab ...`).

mod lab;

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

/// Arguments of `cairn serve` (placeholder).
#[derive(Args, Debug)]
struct ServeArgs {}

fn serve(_args: ServeArgs) -> anyhow::Result<()> {
    println!("not yet");
    Ok(())
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Lab { lab } => lab::run(lab),
    }
}
