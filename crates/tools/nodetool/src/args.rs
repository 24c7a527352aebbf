//! nodetool's command line: global options (`-h`, `-p`, and Cairn's `--token-file`, `--ca`,
//! `--cert`, `--key` for a REST API with a bearer token or TLS) anywhere, the command, its
//! positional arguments and its `--options`.

use crate::error::{bad_use, NodetoolError};
use std::path::PathBuf;

/// The environment variables that stand for the options of the same name when those are
/// not given: `CAIRN_API_TOKEN_FILE` (`--token-file`), `CAIRN_API_CA` (`--ca`),
/// `CAIRN_API_CERT` (`--cert`), `CAIRN_API_KEY` (`--key`).
pub const ENV: [&str; 4] = [
    "CAIRN_API_TOKEN_FILE",
    "CAIRN_API_CA",
    "CAIRN_API_CERT",
    "CAIRN_API_KEY",
];

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
    /// `--token-file`: the file holding the REST API's bearer token.
    pub token_file: Option<PathBuf>,
    /// `--ca`: PEM CA certificates that sign the node's certificate; HTTPS when set.
    pub ca: Option<PathBuf>,
    /// `--cert`: the PEM client certificate chain to present.
    pub cert: Option<PathBuf>,
    /// `--key`: the PEM private key of `--cert`.
    pub key: Option<PathBuf>,
}

impl Invocation {
    /// Fills the connection options not given on the command line from the environment
    /// ([`ENV`]); `get` reads a variable (`std::env::var_os` in `cairn nodetool`).
    pub fn fill_from_env(&mut self, get: impl Fn(&str) -> Option<std::ffi::OsString>) {
        let [token, ca, cert, key] = ENV;
        for (slot, var) in [
            (&mut self.token_file, token),
            (&mut self.ca, ca),
            (&mut self.cert, cert),
            (&mut self.key, key),
        ] {
            if slot.is_none() {
                *slot = get(var).filter(|v| !v.is_empty()).map(PathBuf::from);
            }
        }
    }
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
        token_file: None,
        ca: None,
        cert: None,
        key: None,
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
            "--token-file" => inv.token_file = Some(value("token-file")?.into()),
            "--ca" => inv.ca = Some(value("ca")?.into()),
            "--cert" => inv.cert = Some(value("cert")?.into()),
            "--key" => inv.key = Some(value("key")?.into()),
            // JMX credentials: accepted for script compatibility (the REST API's are
            // --token-file and client certificates).
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
            | "--primary-replica-only"
            | "-T"
            | "--tokens" => {
                let canonical = match name {
                    "-sf" => "skip-flush",
                    "-nt" => "no-ttl",
                    "-e" => "ephemeral",
                    "-las" => "load-and-stream",
                    "-pro" => "primary-replica-only",
                    "-T" => "tokens",
                    long => long.trim_start_matches('-'),
                };
                inv.options.push((canonical.to_string(), "true".into()));
            }
            // Accepted and ignored, as ScyllaDB's nodetool does.
            "-s" | "--split-output" | "-H" | "--human-readable" | "-pr" | "--print-port" => {}
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

    #[test]
    fn connection_options_and_environment() {
        let mut inv = parse_args(&args("status --token-file /t --ca=/ca.pem")).unwrap();
        assert_eq!(inv.command, "status");
        assert_eq!(inv.token_file, Some(PathBuf::from("/t")));
        assert_eq!(inv.ca, Some(PathBuf::from("/ca.pem")));
        inv.fill_from_env(|k| match k {
            "CAIRN_API_TOKEN_FILE" => Some("/env-token".into()),
            "CAIRN_API_CERT" => Some("/c.pem".into()),
            "CAIRN_API_KEY" => Some("".into()),
            _ => None,
        });
        // The command line wins; an empty variable is unset.
        assert_eq!(inv.token_file, Some(PathBuf::from("/t")));
        assert_eq!(inv.cert, Some(PathBuf::from("/c.pem")));
        assert_eq!(inv.key, None);
        assert!(parse_args(&args("status --token-file")).is_err());
    }
}
