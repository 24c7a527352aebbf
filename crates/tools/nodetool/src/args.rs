//! nodetool's command line: global options (`-h`, `-p`) anywhere, the command, its
//! positional arguments and its `--options`.

use crate::error::{bad_use, NodetoolError};

/// Default REST host.
pub const DEFAULT_HOST: &str = "127.0.0.1";
/// Default REST port.
pub const DEFAULT_PORT: u16 = 10000;

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// REST host.
    pub host: String,
    /// REST port.
    pub port: u16,
    /// The command (`flush`, …); empty = help.
    pub command: String,
    /// Its positional arguments.
    pub args: Vec<String>,
    /// Its options (`--flush-memtables false` → `("flush-memtables", "false")`).
    pub options: Vec<(String, String)>,
}

/// Parses nodetool's arguments (without the program name). Global options may come before
/// or after the command, as in nodetool.
pub fn parse_args(args: &[String]) -> Result<Invocation, NodetoolError> {
    let mut inv = Invocation {
        host: DEFAULT_HOST.into(),
        port: DEFAULT_PORT,
        command: String::new(),
        args: Vec::new(),
        options: Vec::new(),
    };
    let mut it = args.iter();
    let mut positional = Vec::new();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with('-') => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |opt: &str| -> Result<String, NodetoolError> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().cloned().ok_or_else(|| {
                    bad_use(format!("Required values for option '{opt}' not provided"))
                }),
            }
        };
        match name {
            "-h" | "--host" => inv.host = value("host")?,
            "-p" | "--port" => {
                let v = value("port")?;
                inv.port = v
                    .parse()
                    .map_err(|_| bad_use(format!("port: can not convert \"{v}\" to a int")))?;
            }
            // JMX credentials: accepted for script compatibility, the REST API has none.
            "-u" | "--username" | "-pw" | "--password" | "-pwf" | "--password-file" => {
                value(name)?;
            }
            "--flush-memtables" | "-F" | "--format" => {
                let v = value(name)?;
                inv.options
                    .push((name.trim_start_matches('-').to_string(), v));
            }
            // snapshot, clearsnapshot, listsnapshots, refresh: stored under one name each.
            "-t" | "--tag" => inv.options.push(("tag".into(), value("tag")?)),
            "-cf" | "--column-family" | "--table" => {
                inv.options.push(("table".into(), value("table")?))
            }
            "-kt" | "--kt-list" | "-kc" | "--kc.list" => {
                inv.options.push(("kt-list".into(), value("ktlist")?))
            }
            "--ttl" => inv.options.push(("ttl".into(), value("ttl")?)),
            "-sf"
            | "--skip-flush"
            | "--all"
            | "-nt"
            | "--no-ttl"
            | "-e"
            | "--ephemeral"
            | "-las"
            | "--load-and-stream"
            | "-pro"
            | "--primary-replica-only" => {
                let canonical = match name {
                    "-sf" => "skip-flush",
                    "-nt" => "no-ttl",
                    "-e" => "ephemeral",
                    "-las" => "load-and-stream",
                    "-pro" => "primary-replica-only",
                    long => long.trim_start_matches('-'),
                };
                inv.options.push((canonical.to_string(), "true".into()));
            }
            // Accepted and ignored, as ScyllaDB's nodetool does.
            // `-T`: Cairn nodes have one token, which `info` always prints.
            "-s" | "--split-output" | "-H" | "--human-readable" | "-pr" | "--print-port" | "-T"
            | "--tokens" => {}
            "-st" | "--start-token" | "-et" | "--end-token" => {
                value(name)?;
            }
            "--help" => positional.insert(0, "help".to_string()),
            "--" => positional.extend(it.by_ref().cloned()),
            n if n.starts_with('-') && n.len() > 1 => {
                return Err(bad_use(format!("Found unexpected parameters: [{a}]")))
            }
            _ => positional.push(a.clone()),
        }
    }
    let mut positional = positional.into_iter();
    inv.command = positional.next().unwrap_or_default();
    inv.args = positional.collect();
    Ok(inv)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn parses_global_options_anywhere() {
        let inv = parse_args(&args("-h 10.0.0.1 flush ks t1 t2 -p 10001")).unwrap();
        assert_eq!(inv.host, "10.0.0.1");
        assert_eq!(inv.port, 10001);
        assert_eq!(inv.command, "flush");
        assert_eq!(inv.args, ["ks", "t1", "t2"]);
        let inv = parse_args(&args("--port=7 compact --flush-memtables false ks")).unwrap();
        assert_eq!(inv.port, 7);
        assert_eq!(
            inv.options,
            [("flush-memtables".to_string(), "false".to_string())]
        );
        assert_eq!(parse_args(&args("-p x version")).unwrap_err().exit_code, 1);
        assert!(parse_args(&args("--bogus version")).is_err());
        assert!(parse_args(&args("-h")).is_err());
    }
}
