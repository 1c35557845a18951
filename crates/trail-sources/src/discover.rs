//! File discovery helpers: walking roots without following symlink loops.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

/// Returns the files under `root` (recursively, following symlinks but never a loop) for which
/// `keep` returns true, sorted. A missing root yields nothing. `max_depth` bounds the walk.
pub fn walk_files(root: &Path, max_depth: usize, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if !root.exists() {
        return out;
    }
    // walkdir detects loops when following links and reports them as errors, which we skip.
    for entry in WalkDir::new(root)
        .follow_links(true)
        .max_depth(max_depth)
        .into_iter()
        .filter_map(Result::ok)
    {
        if entry.file_type().is_file() && keep(entry.path()) {
            out.push(entry.into_path());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Folders never entered when walking configured project roots: dependency and build trees
/// and git's own folder are large and never hold a project of their own.
pub const SKIPPED_DIRS: &[&str] = &["node_modules", "target", ".git"];

/// How deep a configured project root (`TRAIL_PROJECT_ROOTS`) is searched for projects.
pub const PROJECT_ROOT_DEPTH: usize = 4;

/// Returns the existing `<project>/<marker>` paths for sources whose files live inside the
/// projects they were made in (SpecStory's `.specstory/history`, Aider's chat history):
/// `projects` are folders known to be projects (the folders other sessions ran in) and are
/// checked as they are; `roots` are folders holding projects, walked at most `max_depth`
/// levels, never into [`SKIPPED_DIRS`] nor through a symlink loop. Sorted, without duplicates.
pub fn project_markers(
    projects: &[PathBuf],
    roots: &[PathBuf],
    markers: &[&str],
    max_depth: usize,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut check = |dir: &Path| {
        for m in markers {
            let p = dir.join(m);
            if p.exists() {
                out.push(p);
            }
        }
    };
    for p in projects {
        check(p);
    }
    for root in roots {
        if !root.is_dir() {
            continue;
        }
        let walk = WalkDir::new(root)
            .follow_links(true)
            .max_depth(max_depth)
            .into_iter()
            .filter_entry(|e| {
                e.file_type().is_dir()
                    && !e
                        .file_name()
                        .to_str()
                        .is_some_and(|n| SKIPPED_DIRS.contains(&n))
            });
        for entry in walk.filter_map(Result::ok) {
            check(entry.path());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Returns true when `path` has the extension `ext` (without the dot).
pub fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension().is_some_and(|e| e == ext)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn symlink_loop_is_not_followed_forever() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("x.jsonl"), "{}\n").unwrap();
        std::os::unix::fs::symlink(dir.path(), sub.join("loop")).unwrap();
        let files = walk_files(dir.path(), 16, |p| has_extension(p, "jsonl"));
        assert_eq!(files, vec![sub.join("x.jsonl")]);
    }

    #[test]
    fn project_markers_are_found_in_known_folders_and_under_roots() {
        let dir = tempfile::tempdir().unwrap();
        let known = dir.path().join("known");
        let walked = dir.path().join("code");
        let deep = walked.join("team/app");
        let hidden = walked.join("node_modules/pkg");
        for d in [&known, &deep, &hidden] {
            std::fs::create_dir_all(d.join(".specstory/history")).unwrap();
        }
        std::os::unix::fs::symlink(&walked, walked.join("team/loop")).unwrap();
        let found = project_markers(
            &[known.clone(), dir.path().join("gone")],
            std::slice::from_ref(&walked),
            &[".specstory/history"],
            PROJECT_ROOT_DEPTH,
        );
        assert_eq!(
            found,
            vec![
                walked.join("team/app/.specstory/history"),
                known.join(".specstory/history"),
            ]
        );
    }
}
