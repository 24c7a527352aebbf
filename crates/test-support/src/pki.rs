//! Test certificates: CAs and the certificates they sign, made by the `openssl` command in a
//! temporary directory (no network), as tests/python/test_tls.py makes its own. The keys
//! are P-256 EC keys, valid for two days.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A directory of PEM files: `NAME.crt` and `NAME.key` for every CA and leaf made.
pub struct TestPki {
    dir: tempfile::TempDir,
}

/// Runs `openssl ARGS` in `dir`; panics with its output when it fails.
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the `openssl` command makes the test certificates");
    assert!(out.status.success(), "openssl {args:?}: {out:?}");
}

const EC: [&str; 5] = [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
];

impl Default for TestPki {
    fn default() -> Self {
        TestPki::new()
    }
}

impl TestPki {
    /// An empty directory.
    pub fn new() -> TestPki {
        TestPki {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A file of the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A self-signed CA, `name.crt` and `name.key`.
    pub fn ca(&self, name: &str) {
        let (key, crt, subj) = (
            format!("{name}.key"),
            format!("{name}.crt"),
            format!("/CN={name}"),
        );
        let mut args = vec!["req", "-x509"];
        args.extend(EC);
        args.extend(["-keyout", &key, "-out", &crt, "-days", "2", "-subj", &subj]);
        openssl(self.dir(), &args);
    }

    /// A certificate for `name` signed by CA `ca`, with the X.509 extensions `ext` (lines
    /// of `openssl x509 -extfile`).
    pub fn leaf(&self, name: &str, ca: &str, ext: &str) {
        let d = self.dir();
        std::fs::write(d.join(format!("{name}.ext")), ext).unwrap();
        let (key, csr, crt) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
        );
        let subj = format!("/CN={name}");
        let mut args = vec!["req"];
        args.extend(EC);
        args.extend(["-keyout", &key, "-out", &csr, "-subj", &subj]);
        openssl(d, &args);
        let (ca_crt, ca_key, ext_file) = (
            format!("{ca}.crt"),
            format!("{ca}.key"),
            format!("{name}.ext"),
        );
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &ca_crt,
                "-CAkey",
                &ca_key,
                "-CAcreateserial",
                "-out",
                &crt,
                "-days",
                "2",
                "-extfile",
                &ext_file,
            ],
        );
    }
}
