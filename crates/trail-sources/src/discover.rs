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
}
