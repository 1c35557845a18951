//! Finds a checkout's `owner/name` from its git remote, reading `.git/config` directly (no git
//! process): the cwd of a session is only a hint, and the checkout may be gone.

use std::path::{Path, PathBuf};

/// Returns `owner/name` of the `origin` remote (else the first remote) of the checkout holding
/// `cwd`, when that checkout exists locally.
pub fn repository_of(cwd: &Path) -> Option<String> {
    let git_dir = find_git_dir(cwd)?;
    let config = std::fs::read_to_string(common_dir(&git_dir).join("config")).ok()?;
    let url = remote_url(&config)?;
    owner_name(&url)
}

/// Returns the branch checked out in the checkout holding `cwd` (none on a detached HEAD or
/// outside a checkout). A worktree's `HEAD` lives in its own git dir, not the shared one.
pub fn branch_of(cwd: &Path) -> Option<String> {
    let head = std::fs::read_to_string(find_git_dir(cwd)?.join("HEAD")).ok()?;
    let branch = head.trim().strip_prefix("ref: refs/heads/")?;
    (!branch.is_empty()).then(|| branch.to_string())
}

/// The checkout holding `start`: the nearest folder at or above it with a `.git` (a folder, or
/// a file in a worktree or submodule).
pub fn checkout_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .take(64)
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

fn find_git_dir(start: &Path) -> Option<PathBuf> {
    let root = checkout_root(start)?;
    let dot = root.join(".git");
    if dot.is_dir() {
        return Some(dot);
    }
    // A worktree or submodule: `gitdir: <path>`.
    let text = std::fs::read_to_string(&dot).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let p = Path::new(target);
    Some(if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    })
}

/// A worktree's git dir names its shared repository in `commondir`.
fn common_dir(git_dir: &Path) -> PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => {
            let p = Path::new(c.trim());
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                git_dir.join(p)
            }
        }
        Err(_) => git_dir.to_path_buf(),
    }
}

fn remote_url(config: &str) -> Option<String> {
    let mut section = String::new();
    let mut first: Option<String> = None;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        if !section.starts_with("[remote ") {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            if k.trim() == "url" {
                let url = v.trim().trim_matches('"').to_string();
                if section == "[remote \"origin\"]" {
                    return Some(url);
                }
                first.get_or_insert(url);
            }
        }
    }
    first
}

/// Turns `git@github.com:o/n.git`, `https://host/o/n`, `ssh://git@host:22/o/n.git` into `o/n`.
pub fn owner_name(url: &str) -> Option<String> {
    let url = url.trim().trim_end_matches('/');
    let url = url.strip_suffix(".git").unwrap_or(url);
    let path = if let Some((_, rest)) = url.split_once("://") {
        rest.split_once('/').map(|(_, p)| p)?
    } else if let Some((_, p)) = url.split_once(':') {
        p
    } else {
        url
    };
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if parts.len() < 2 {
        return None;
    }
    Some(format!(
        "{}/{}",
        parts[parts.len() - 2],
        parts[parts.len() - 1]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            owner_name("git@github.com:acme/widgets.git").as_deref(),
            Some("acme/widgets")
        );
        assert_eq!(
            owner_name("https://github.com/acme/widgets").as_deref(),
            Some("acme/widgets")
        );
        assert_eq!(
            owner_name("ssh://git@gitlab.example.com:2222/grp/sub/proj.git").as_deref(),
            Some("sub/proj")
        );
        assert_eq!(owner_name("nothing"), None);
    }

    #[test]
    fn reads_the_checked_out_branch() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        assert_eq!(
            branch_of(&dir.path().join("src")).as_deref(),
            Some("feature/x")
        );
        // Detached: a commit id, no branch.
        std::fs::write(dir.path().join(".git/HEAD"), "3f2a9c1d\n").unwrap();
        assert_eq!(branch_of(dir.path()), None);
    }

    #[test]
    fn reads_origin_from_a_checkout() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://github.com/up/x\n[remote \"origin\"]\n\turl = git@github.com:me/x.git\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        assert_eq!(
            repository_of(&dir.path().join("src/deep")).as_deref(),
            Some("me/x")
        );
        assert_eq!(repository_of(Path::new("/nonexistent/place")), None);
    }
}
