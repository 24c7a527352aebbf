//! `cairn nodetool`: thin wrapper over the `cairn-nodetool` crate, which holds the commands,
//! the REST client and the output formats (so they are tested there).

use clap::Args;

/// Arguments of `cairn nodetool`: passed through untouched, because nodetool's `-h` is the
/// host (not help) and its global options may follow the command.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct NodetoolArgs {
    /// `[-h HOST] [-p API_PORT] [--token-file FILE] [--ca PEM [--cert PEM --key PEM]]
    /// <command> [args…]`; `help` lists the commands.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<String>,
}

/// Runs the command, prints its output, and returns nodetool's exit code.
pub fn run(args: NodetoolArgs) -> i32 {
    match cairn_nodetool::main(&args.args) {
        Ok(out) => {
            print!("{out}");
            0
        }
        Err(e) => {
            eprintln!("{}", e.message);
            e.exit_code
        }
    }
}
