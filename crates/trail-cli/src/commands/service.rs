//! `trail service install|uninstall|status`: runs `trail index --watch` at login, as the
//! operating system's own service manager does it: a systemd user unit on Linux, a launchd
//! agent on macOS, a Task Scheduler task on Windows. `--dry-run` prints the file instead.
//!
//! The unit names this binary by its absolute path and the store by its absolute path, so the
//! service indexes into the store the user's other commands read, whatever its environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;

use crate::error::{CliError, CliResult};
use crate::Ctx;

/// The service's name in every service manager.
const NAME: &str = "trail-index";
/// launchd's label (reverse-DNS, as launchd agents are named).
const LAUNCHD_LABEL: &str = "dev.trail.index";

/// Keep the store fresh in the background: install, remove or inspect the login service
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Write the service that runs `trail index --watch` at login, enable and start it
    Install {
        /// Print the unit (or plist, or task XML) and where it would go; change nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Stop the service, disable it and remove its file
    Uninstall {
        /// Say what would be removed; change nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Whether the service is installed and running, and whether a watcher holds the store
    Status,
}

/// The service managers trail writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Systemd,
    Launchd,
    TaskScheduler,
}

impl Platform {
    /// The one this build runs on.
    pub fn current() -> Platform {
        if cfg!(target_os = "macos") {
            Platform::Launchd
        } else if cfg!(windows) {
            Platform::TaskScheduler
        } else {
            Platform::Systemd
        }
    }
}

/// A service definition: where it goes and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceFile {
    pub path: PathBuf,
    pub content: String,
}

/// What the service runs: this binary, then its arguments.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let platform = Platform::current();
    let file = service_file(ctx, platform)?;
    match args.action {
        Action::Install { dry_run: true } => {
            ctx.ui.line(&format!("# {}", file.path.display()))?;
            ctx.ui.line(file.content.trim_end_matches('\n'))?;
            Ok(0)
        }
        Action::Install { dry_run: false } => install(ctx, platform, &file),
        Action::Uninstall { dry_run } => uninstall(ctx, platform, &file, dry_run),
        Action::Status => status(ctx, platform, &file),
    }
}

/// The file for `platform`, running this binary on this store.
fn service_file(ctx: &Ctx, platform: Platform) -> CliResult<ServiceFile> {
    let invocation = Invocation {
        program: std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .context("cannot tell where this trail binary is")?,
        args: watcher_args(ctx)?,
    };
    let home = ctx
        .env
        .home()
        .ok_or_else(|| CliError::usage("no home directory: the service is installed per user"))?;
    let dir = match platform {
        Platform::Systemd => ctx
            .env
            .get("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".config"))
            .join("systemd/user"),
        Platform::Launchd => home.join("Library/LaunchAgents"),
        Platform::TaskScheduler => ctx
            .env
            .get("LOCALAPPDATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join("AppData/Local"))
            .join("trail"),
    };
    Ok(render(platform, &invocation, &dir))
}

/// `index --watch` with the store (absolute), and `--home` / `--config` when given.
fn watcher_args(ctx: &Ctx) -> CliResult<Vec<OsString>> {
    let absolute = |p: &Path| -> CliResult<PathBuf> {
        Ok(std::path::absolute(p).with_context(|| format!("cannot resolve {}", p.display()))?)
    };
    let mut args: Vec<OsString> = vec!["--store".into(), absolute(&ctx.store_path)?.into()];
    if let Some(home) = &ctx.home {
        args.extend(["--home".into(), absolute(home)?.into()]);
    }
    if let Some(config) = &ctx.config.path {
        args.extend(["--config".into(), absolute(config)?.into()]);
    }
    args.extend(["index".into(), "--watch".into()]);
    Ok(args)
}

/// The service definition for `platform`, written into `dir`. Pure: tested for every platform
/// on any one.
pub fn render(platform: Platform, run: &Invocation, dir: &Path) -> ServiceFile {
    match platform {
        Platform::Systemd => ServiceFile {
            path: dir.join(format!("{NAME}.service")),
            content: systemd_unit(run),
        },
        Platform::Launchd => ServiceFile {
            path: dir.join(format!("{LAUNCHD_LABEL}.plist")),
            content: launchd_plist(run),
        },
        Platform::TaskScheduler => ServiceFile {
            path: dir.join(format!("{NAME}.xml")),
            content: task_xml(run),
        },
    }
}

fn systemd_unit(run: &Invocation) -> String {
    let exec: Vec<String> = std::iter::once(run.program.as_os_str())
        .chain(run.args.iter().map(OsString::as_os_str))
        .map(|a| systemd_quote(&a.to_string_lossy()))
        .collect();
    format!(
        "[Unit]\n\
         Description=trail: keep the index of AI coding agent sessions fresh\n\
         Documentation=man:trail-index(1)\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={}\n\
         Restart=on-failure\n\
         RestartSec=10\n\
         Nice=10\n\
         IOSchedulingClass=idle\n\
         KillSignal=SIGTERM\n\
         TimeoutStopSec=30\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        exec.join(" ")
    )
}

/// A word of `ExecStart=`: double-quoted, with `\`, `"`, `$` and `%` escaped as systemd reads
/// them.
fn systemd_quote(word: &str) -> String {
    let mut out = String::from("\"");
    for c in word.chars() {
        match c {
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            '$' => out.push_str("$$"),
            '%' => out.push_str("%%"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

fn launchd_plist(run: &Invocation) -> String {
    let args: String = std::iter::once(run.program.as_os_str())
        .chain(run.args.iter().map(OsString::as_os_str))
        .map(|a| {
            format!(
                "    <string>{}</string>\n",
                xml_escape(&a.to_string_lossy())
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \x20 <key>Label</key>\n\
         \x20 <string>{LAUNCHD_LABEL}</string>\n\
         \x20 <key>ProgramArguments</key>\n\
         \x20 <array>\n\
         {args}\
         \x20 </array>\n\
         \x20 <key>RunAtLoad</key>\n\
         \x20 <true/>\n\
         \x20 <key>KeepAlive</key>\n\
         \x20 <dict>\n\
         \x20   <key>SuccessfulExit</key>\n\
         \x20   <false/>\n\
         \x20 </dict>\n\
         \x20 <key>ProcessType</key>\n\
         \x20 <string>Background</string>\n\
         \x20 <key>LowPriorityIO</key>\n\
         \x20 <true/>\n\
         </dict>\n\
         </plist>\n"
    )
}

fn task_xml(run: &Invocation) -> String {
    let args: Vec<String> = run
        .args
        .iter()
        .map(|a| windows_quote(&a.to_string_lossy()))
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n\
         <Task version=\"1.2\" xmlns=\"http://schemas.microsoft.com/windows/2004/02/mit/task\">\n\
         \x20 <RegistrationInfo>\n\
         \x20   <Description>trail: keep the index of AI coding agent sessions fresh</Description>\n\
         \x20 </RegistrationInfo>\n\
         \x20 <Triggers>\n\
         \x20   <LogonTrigger>\n\
         \x20     <Enabled>true</Enabled>\n\
         \x20   </LogonTrigger>\n\
         \x20 </Triggers>\n\
         \x20 <Settings>\n\
         \x20   <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>\n\
         \x20   <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>\n\
         \x20   <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>\n\
         \x20   <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>\n\
         \x20   <Priority>7</Priority>\n\
         \x20   <RestartOnFailure>\n\
         \x20     <Interval>PT1M</Interval>\n\
         \x20     <Count>3</Count>\n\
         \x20   </RestartOnFailure>\n\
         \x20 </Settings>\n\
         \x20 <Actions Context=\"Author\">\n\
         \x20   <Exec>\n\
         \x20     <Command>{}</Command>\n\
         \x20     <Arguments>{}</Arguments>\n\
         \x20   </Exec>\n\
         \x20 </Actions>\n\
         </Task>\n",
        xml_escape(&run.program.to_string_lossy()),
        xml_escape(&args.join(" "))
    )
}

/// A command-line word as Windows programs split them: quoted when it holds a space or a
/// quote, inner quotes and the backslashes before them doubled.
fn windows_quote(word: &str) -> String {
    if !word.is_empty() && !word.contains([' ', '\t', '"']) {
        return word.to_string();
    }
    let mut out = String::from("\"");
    let mut backslashes = 0;
    for c in word.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                out.push_str(&"\\".repeat(backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            _ => {
                out.push_str(&"\\".repeat(backslashes));
                out.push(c);
                backslashes = 0;
            }
        }
    }
    out.push_str(&"\\".repeat(backslashes * 2));
    out.push('"');
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes the file and asks the service manager to enable and start it.
fn install(ctx: &mut Ctx, platform: Platform, file: &ServiceFile) -> CliResult<u8> {
    ensure_manager(platform)?;
    if let Some(dir) = file.path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(&file.path, &file.content)
        .with_context(|| format!("cannot write {}", file.path.display()))?;
    ctx.ui.line(&format!("Wrote {}", file.path.display()))?;
    for step in install_steps(platform, &file.path) {
        run_step(ctx, &step)?;
    }
    ctx.ui
        .line("The watcher runs now and at every login: `trail service status` shows it.")?;
    Ok(0)
}

fn uninstall(
    ctx: &mut Ctx,
    platform: Platform,
    file: &ServiceFile,
    dry_run: bool,
) -> CliResult<u8> {
    if !file.path.exists() {
        ctx.ui.line(&format!(
            "Not installed ({} does not exist).",
            file.path.display()
        ))?;
        return Ok(0);
    }
    if dry_run {
        ctx.ui.line(&format!(
            "Would stop the service and remove {}",
            file.path.display()
        ))?;
        return Ok(0);
    }
    ensure_manager(platform)?;
    for step in uninstall_steps(platform, &file.path) {
        // Stopping a service that is not running fails; removing the file is what matters.
        if let Err(e) = run_step(ctx, &step) {
            tracing::info!(error = %format!("{:#}", e.error), "an uninstall step failed");
        }
    }
    std::fs::remove_file(&file.path)
        .with_context(|| format!("cannot remove {}", file.path.display()))?;
    ctx.ui.line(&format!("Removed {}", file.path.display()))?;
    Ok(0)
}

fn status(ctx: &mut Ctx, platform: Platform, file: &ServiceFile) -> CliResult<u8> {
    let installed = file.path.exists();
    ctx.ui.line(&format!(
        "service: {} ({})",
        if installed {
            "installed"
        } else {
            "not installed"
        },
        file.path.display()
    ))?;
    if installed && manager_available(platform) {
        let state = manager_state(platform).unwrap_or_else(|| "unknown".into());
        ctx.ui.line(&format!("state: {state}"))?;
    }
    match trail_ingest::watch::running_watcher(&ctx.store_path) {
        Some(pid) => ctx.ui.line(&format!(
            "watcher: process {pid} keeps {} fresh",
            ctx.store_path.display()
        ))?,
        None => ctx.ui.line(&format!(
            "watcher: none runs for {}",
            ctx.store_path.display()
        ))?,
    }
    Ok(0)
}

/// One command of the service manager's.
struct Step {
    program: &'static str,
    args: Vec<OsString>,
}

fn step(program: &'static str, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Step {
    Step {
        program,
        args: args.iter().map(|a| a.as_ref().to_os_string()).collect(),
    }
}

fn install_steps(platform: Platform, path: &Path) -> Vec<Step> {
    match platform {
        Platform::Systemd => vec![
            step("systemctl", &[&"--user", &"daemon-reload"]),
            step(
                "systemctl",
                &[&"--user", &"enable", &"--now", &format!("{NAME}.service")],
            ),
        ],
        Platform::Launchd => vec![step("launchctl", &[&"load", &"-w", &path])],
        Platform::TaskScheduler => vec![
            step(
                "schtasks",
                &[&"/Create", &"/TN", &NAME, &"/XML", &path, &"/F"],
            ),
            step("schtasks", &[&"/Run", &"/TN", &NAME]),
        ],
    }
}

fn uninstall_steps(platform: Platform, path: &Path) -> Vec<Step> {
    match platform {
        Platform::Systemd => vec![
            step(
                "systemctl",
                &[&"--user", &"disable", &"--now", &format!("{NAME}.service")],
            ),
            step("systemctl", &[&"--user", &"daemon-reload"]),
        ],
        Platform::Launchd => vec![step("launchctl", &[&"unload", &"-w", &path])],
        Platform::TaskScheduler => vec![
            step("schtasks", &[&"/End", &"/TN", &NAME]),
            step("schtasks", &[&"/Delete", &"/TN", &NAME, &"/F"]),
        ],
    }
}

fn run_step(ctx: &mut Ctx, step: &Step) -> CliResult {
    let shown = format!(
        "{} {}",
        step.program,
        step.args
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    ctx.ui.line(&format!("$ {shown}"))?;
    let out = Command::new(step.program)
        .args(&step.args)
        .output()
        .with_context(|| format!("cannot run {shown}"))?;
    if !out.status.success() {
        return Err(CliError::from(anyhow::anyhow!(
            "`{shown}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// Fails clearly when the service manager is not there to run the service (a container, a
/// machine without systemd, a session without a user manager).
fn ensure_manager(platform: Platform) -> CliResult {
    if manager_available(platform) {
        return Ok(());
    }
    let what = match platform {
        Platform::Systemd => {
            "systemd is not available for this user (`systemctl --user` cannot reach a user manager)"
        }
        Platform::Launchd => "launchd is not available (`launchctl` cannot be run)",
        Platform::TaskScheduler => "the Task Scheduler is not available (`schtasks` cannot be run)",
    };
    Err(CliError::from(anyhow::anyhow!("{what}")).with_hint(
        "run `trail index --watch` from your session's startup instead; `trail service install --dry-run` prints the unit",
    ))
}

fn manager_available(platform: Platform) -> bool {
    let probe = match platform {
        Platform::Systemd => step("systemctl", &[&"--user", &"show-environment"]),
        Platform::Launchd => step("launchctl", &[&"version"]),
        Platform::TaskScheduler => step("schtasks", &[&"/Query", &"/TN", &"\\"]),
    };
    Command::new(probe.program)
        .args(&probe.args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// What the manager says of the service (`active`, `inactive`, ...).
fn manager_state(platform: Platform) -> Option<String> {
    let probe = match platform {
        Platform::Systemd => step(
            "systemctl",
            &[&"--user", &"is-active", &format!("{NAME}.service")],
        ),
        Platform::Launchd => step("launchctl", &[&"list", &LAUNCHD_LABEL]),
        Platform::TaskScheduler => step("schtasks", &[&"/Query", &"/TN", &NAME]),
    };
    let out = Command::new(probe.program)
        .args(&probe.args)
        .output()
        .ok()?;
    Some(match platform {
        Platform::Systemd => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        _ if out.status.success() => "loaded".into(),
        _ => "not loaded".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invocation() -> Invocation {
        Invocation {
            program: PathBuf::from("/opt/my tools/trail"),
            args: [
                "--store",
                "/home/me/.local/share/trail/trail.db",
                "index",
                "--watch",
            ]
            .map(OsString::from)
            .to_vec(),
        }
    }

    #[test]
    fn the_systemd_unit_runs_the_watcher_at_login_and_restarts_it() {
        let f = render(
            Platform::Systemd,
            &invocation(),
            Path::new("/home/me/.config/systemd/user"),
        );
        assert_eq!(
            f.path,
            Path::new("/home/me/.config/systemd/user/trail-index.service")
        );
        assert!(f.content.contains(
            "\nExecStart=\"/opt/my tools/trail\" \"--store\" \"/home/me/.local/share/trail/trail.db\" \"index\" \"--watch\"\n"
        ), "{}", f.content);
        for line in [
            "Type=simple",
            "Restart=on-failure",
            "KillSignal=SIGTERM",
            "WantedBy=default.target",
        ] {
            assert!(
                f.content.lines().any(|l| l == line),
                "{line} in {}",
                f.content
            );
        }
    }

    #[test]
    fn systemd_words_escape_what_systemd_expands() {
        assert_eq!(
            systemd_quote(r#"a "b" $HOME 100% c\d"#),
            r#""a \"b\" $$HOME 100%% c\\d""#
        );
    }

    #[test]
    fn the_launchd_agent_lists_every_argument_escaped() {
        let mut run = invocation();
        run.args.insert(0, OsString::from("--home"));
        run.args.insert(1, OsString::from("/tmp/a&b"));
        let f = render(
            Platform::Launchd,
            &run,
            Path::new("/Users/me/Library/LaunchAgents"),
        );
        assert_eq!(
            f.path,
            Path::new("/Users/me/Library/LaunchAgents/dev.trail.index.plist")
        );
        let args: Vec<&str> = f
            .content
            .lines()
            .filter_map(|l| l.trim().strip_prefix("<string>")?.strip_suffix("</string>"))
            .collect();
        assert_eq!(
            args,
            [
                "dev.trail.index",
                "/opt/my tools/trail",
                "--home",
                "/tmp/a&amp;b",
                "--store",
                "/home/me/.local/share/trail/trail.db",
                "index",
                "--watch",
                "Background"
            ]
        );
        assert!(f.content.contains("<key>RunAtLoad</key>\n  <true/>"));
    }

    #[test]
    fn the_windows_task_starts_at_logon_with_quoted_arguments() {
        let run = Invocation {
            program: PathBuf::from(r"C:\Program Files\trail\trail.exe"),
            args: ["--store", r"C:\Users\Me Too\trail.db", "index", "--watch"]
                .map(OsString::from)
                .to_vec(),
        };
        let f = render(
            Platform::TaskScheduler,
            &run,
            Path::new(r"C:\Users\Me\AppData\Local\trail"),
        );
        assert!(f
            .content
            .contains(r"<Command>C:\Program Files\trail\trail.exe</Command>"));
        assert!(f.content.contains(
            r#"<Arguments>--store &quot;C:\Users\Me Too\trail.db&quot; index --watch</Arguments>"#
        ), "{}", f.content);
        assert!(f.content.contains("<LogonTrigger>"));
        assert!(f
            .content
            .contains("<ExecutionTimeLimit>PT0S</ExecutionTimeLimit>"));
    }

    #[test]
    fn windows_quoting_doubles_backslashes_before_quotes() {
        assert_eq!(windows_quote("plain"), "plain");
        assert_eq!(windows_quote(r#"a "b""#), r#""a \"b\"""#);
        assert_eq!(
            windows_quote(r"C:\dir with space\"),
            r#""C:\dir with space\\""#
        );
        assert_eq!(windows_quote(""), "\"\"");
    }
}
