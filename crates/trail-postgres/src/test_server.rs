//! A throwaway PostgreSQL server for tests: `initdb` in a temporary folder, `postgres` listening
//! on a socket in that folder and on a free loopback port, stopped when dropped. Never a system
//! service, never another address than 127.0.0.1.
//!
//! Debian's `postgresql` package installs the binaries under `/usr/lib/postgresql/N/bin` (not on
//! `PATH`); `.ci/run` installs it when `initdb` is missing. PostgreSQL refuses to run as root, so
//! under root the server runs as the `postgres` user the package creates, in a folder it owns.
//!
//! Without a server, [`TestServer::start_or_skip`] says the test was skipped, and fails it under
//! `CI=true` (CI installs the package, so a missing server there is a defect).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The superuser `initdb` creates in a test cluster.
pub const ADMIN: &str = "trail_admin";

/// A running test server.
pub struct TestServer {
    dir: PathBuf,
    port: u16,
    child: Child,
    tls_ca: Option<PathBuf>,
}

/// Where `initdb`, `postgres` live: the newest `/usr/lib/postgresql/N/bin`, else `PATH`.
pub fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|d| d.join("initdb").exists())
}

impl TestServer {
    /// Starts a server in a new folder under `parent`, or says the test is skipped (fails under
    /// `CI=true`) when PostgreSQL is not installed.
    pub fn start_or_skip(parent: &Path, test: &str) -> Option<TestServer> {
        Self::start_with(parent, test, false)
    }

    /// As [`TestServer::start_or_skip`], with TLS on (a self-signed certificate for
    /// `localhost`/127.0.0.1; [`TestServer::tls_ca`] is its file).
    pub fn start_tls_or_skip(parent: &Path, test: &str) -> Option<TestServer> {
        Self::start_with(parent, test, true)
    }

    // A test helper: saying that a test was skipped is its job (never built into trail).
    #[allow(clippy::print_stderr)]
    fn start_with(parent: &Path, test: &str, tls: bool) -> Option<TestServer> {
        let Some(bin) = bin_dir() else {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
            assert!(
                !ci,
                "{test}: PostgreSQL's initdb was not found (CI installs Debian's postgresql package)"
            );
            eprintln!("{test}: skipped, PostgreSQL (initdb) is not installed");
            return None;
        };
        Some(Self::start(&bin, parent, tls).unwrap_or_else(|e| panic!("{test}: {e}")))
    }

    fn start(bin: &Path, parent: &Path, tls: bool) -> Setup<TestServer> {
        let dir = parent.join("pg");
        let data = dir.join("data");
        std::fs::create_dir_all(&dir)?;
        let as_root = is_root();
        let owner = if as_root { Some(postgres_ids()?) } else { None };
        if let Some((uid, gid)) = owner {
            chown_tree(parent, uid, gid)?;
        }
        run(command(bin, "initdb", as_root)
            .args(["-D"])
            .arg(&data)
            .args(["-U", ADMIN, "--auth=trust", "--encoding=UTF8", "--locale=C"])
            .args(["--no-sync"]))?;
        let mut tls_ca = None;
        if tls {
            // A certificate authority of the test's own, and a server certificate it signed
            // (rustls refuses a CA certificate presented as the server's).
            let ca_key = dir.join("ca.key");
            let ca = dir.join("ca.crt");
            let csr = dir.join("server.csr");
            let ext = dir.join("server.ext");
            let cert = data.join("server.crt");
            let key = data.join("server.key");
            run(Command::new("openssl")
                .args([
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                ])
                .args(["-subj", "/CN=trail test CA"])
                .arg("-keyout")
                .arg(&ca_key)
                .arg("-out")
                .arg(&ca))?;
            run(Command::new("openssl")
                .args([
                    "req",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-subj",
                    "/CN=localhost",
                ])
                .arg("-keyout")
                .arg(&key)
                .arg("-out")
                .arg(&csr))?;
            std::fs::write(
                &ext,
                "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
                 keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
            )?;
            run(Command::new("openssl")
                .args(["x509", "-req", "-days", "2", "-CAcreateserial"])
                .arg("-in")
                .arg(&csr)
                .arg("-CA")
                .arg(&ca)
                .arg("-CAkey")
                .arg(&ca_key)
                .arg("-extfile")
                .arg(&ext)
                .arg("-out")
                .arg(&cert))?;
            set_mode(&key, 0o600)?;
            if let Some((uid, gid)) = owner {
                chown_tree(&data, uid, gid)?;
            }
            tls_ca = Some(ca);
        }
        let port = free_port()?;
        let mut cmd = command(bin, "postgres", as_root);
        cmd.arg("-D")
            .arg(&data)
            .arg("-k")
            .arg(&dir)
            .args(["-p", &port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
            .args(["-c", "full_page_writes=off", "-c", "max_connections=60"])
            .args(["-c", "shared_buffers=64MB"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(dir.join("server.log"))?));
        if tls {
            cmd.args(["-c", "ssl=on"]);
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start postgres: {e}"))?;
        let server = TestServer {
            dir,
            port,
            child,
            tls_ca,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&self) -> Setup<()> {
        let started = Instant::now();
        loop {
            match postgres::Client::connect(&self.admin_url(), postgres::NoTls) {
                Ok(_) => return Ok(()),
                Err(e) if started.elapsed() > Duration::from_secs(30) => {
                    let log =
                        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
                    return Err(format!("the test server did not start: {e}\n{log}").into());
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// The loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `db` as `user` (trust authentication: no password).
    pub fn url(&self, user: &str, db: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{db}", self.port)
    }

    /// The superuser's URL of the `postgres` database.
    pub fn admin_url(&self) -> String {
        self.url(ADMIN, "postgres")
    }

    /// The certificate a TLS test server presents (its own CA).
    pub fn tls_ca(&self) -> Option<&Path> {
        self.tls_ca.as_deref()
    }

    /// Runs SQL as the superuser in database `db`.
    pub fn admin(&self, db: &str, sql: &str) -> Result<(), postgres::Error> {
        let mut c = postgres::Client::connect(&self.url(ADMIN, db), postgres::NoTls)?;
        c.batch_execute(sql)
    }

    /// Creates database `name` and returns the superuser's URL of it.
    pub fn create_database(&self, name: &str) -> String {
        self.admin("postgres", &format!("CREATE DATABASE \"{name}\""))
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
        self.url(ADMIN, name)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // SIGQUIT: an immediate shutdown (a test cluster keeps nothing).
        let _ = Command::new("kill")
            .args(["-QUIT", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(bin: &Path, program: &str, as_root: bool) -> Command {
    if as_root {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=postgres",
            "--regid=postgres",
            "--init-groups",
            "--reset-env",
        ])
        .arg(bin.join(program));
        c
    } else {
        Command::new(bin.join(program))
    }
}

/// What setting the test server up can fail with (the error it came from is kept).
type Setup<T> = Result<T, Box<dyn std::error::Error>>;

fn run(cmd: &mut Command) -> Setup<()> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into())
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn postgres_ids() -> Setup<(u32, u32)> {
    let id = |flag: &str| -> Setup<u32> {
        let out = Command::new("id").args([flag, "postgres"]).output()?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| "running as root and there is no postgres user to run the server".into())
    };
    Ok((id("-u")?, id("-g")?))
}

fn chown_tree(dir: &Path, uid: u32, gid: u32) -> Setup<()> {
    std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
    if dir.is_dir() {
        for e in std::fs::read_dir(dir)? {
            chown_tree(&e?.path(), uid, gid)?;
        }
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> Setup<()> {
    use std::os::unix::fs::PermissionsExt;
    Ok(std::fs::set_permissions(
        path,
        std::fs::Permissions::from_mode(mode),
    )?)
}

fn free_port() -> Setup<u16> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}
