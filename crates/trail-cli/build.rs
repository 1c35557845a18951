//! Stamps the binary with the git commit it was built from and the build date, for
//! `trail --version`. Outside a git checkout (a source tarball) the commit is `unknown`; a
//! set `SOURCE_DATE_EPOCH` fixes the date, for reproducible builds.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TRAIL_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=TRAIL_BUILD_DATE={}", build_date());
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // A new commit changes HEAD (a detached checkout) or the ref HEAD names (a branch). The
    // files are found without git, so that a build where git failed once (not on the PATH,
    // refusing the folder) is stamped again at the next commit instead of staying `unknown`.
    for path in head_files(Path::new(env!("CARGO_MANIFEST_DIR"))) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// Runs git in this crate's folder; `None` when git is missing or this is not a checkout.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The files a commit or a checkout rewrites: the checkout's `HEAD`, the branch's ref file and
/// `packed-refs`, those that exist (a missing file would re-run this script at every build).
/// A linked worktree's `.git` is a file naming its own folder, whose `commondir` holds refs.
fn head_files(crate_dir: &Path) -> Vec<PathBuf> {
    let Some(dot_git) = crate_dir
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|p| p.exists())
    else {
        return Vec::new();
    };
    let git_dir = if dot_git.is_file() {
        let text = std::fs::read_to_string(&dot_git).unwrap_or_default();
        match text.trim().strip_prefix("gitdir:") {
            Some(dir) => dot_git.parent().unwrap_or(crate_dir).join(dir.trim()),
            None => return Vec::new(),
        }
    } else {
        dot_git
    };
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .map(|dir| git_dir.join(dir.trim()))
        .unwrap_or_else(|_| git_dir.clone());
    let head = git_dir.join("HEAD");
    let branch = std::fs::read_to_string(&head).ok().and_then(|text| {
        text.trim()
            .strip_prefix("ref:")
            .map(|r| common.join(r.trim()))
    });
    [Some(head), branch, Some(common.join("packed-refs"))]
        .into_iter()
        .flatten()
        .filter(|p| p.is_file())
        .collect()
}

/// Today's date in UTC (or `SOURCE_DATE_EPOCH`'s) as `YYYY-MM-DD`.
fn build_date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        });
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (era * 400 + yoe + i64::from(m <= 2), m, d)
}
