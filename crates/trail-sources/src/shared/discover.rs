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
    sort_walked(&mut out);
    out
}

/// Sorts the paths of one or more walks in [`walked_path_order`] and drops repeats (a file
/// under two roots that overlap). A walk's own output comes sorted, so this is a pass over it.
pub fn sort_walked(paths: &mut Vec<PathBuf>) {
    paths.sort_unstable_by(|a, b| walked_path_order(a, b));
    paths.dedup();
}

/// `Path`'s own order (component by component) for paths a walk yields, which have no `.`,
/// `..` or empty component below their root: on Unix their bytes in order, a separator below
/// any other byte. `Path::cmp` split both paths into components at every comparison, a tenth
/// of a no-change index's CPU on 6,000 files.
pub fn walked_path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let (x, y) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
        let rank = |c: u8| if c == b'/' { 0 } else { c };
        match first_difference(x, y) {
            Some(i) => rank(x[i]).cmp(&rank(y[i])),
            None => x.len().cmp(&y.len()),
        }
    }
    #[cfg(not(unix))]
    a.cmp(b)
}

/// Where `x` and `y` first differ, eight bytes at a time: paths of one walk share long
/// prefixes, and a byte at a time this was half of sorting 20,000 of them.
#[cfg(unix)]
fn first_difference(x: &[u8], y: &[u8]) -> Option<usize> {
    let n = x.len().min(y.len());
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let mut i = 0;
    while i + 8 <= n {
        let diff = word(x, i) ^ word(y, i);
        if diff != 0 {
            return Some(i + (diff.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..n).find(|&j| x[j] != y[j])
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
    use proptest::prelude::*;

    proptest! {
        /// The byte order with separators first is `Path`'s own on walked paths: names of
        /// bytes on both sides of `/` (space, `-`, `.`, digits, letters, non-ASCII).
        #[test]
        fn walked_paths_sort_as_paths_do(
            a in proptest::collection::vec("[ a.0-]{1,3}|é|b-c|\\.x", 1..5),
            b in proptest::collection::vec("[ a.0-]{1,3}|é|b-c|\\.x", 1..5),
        ) {
            let path = |names: &[String]| {
                let names: Vec<&str> = names.iter().map(|n| match n.as_str() {
                    "." | ".." => "dot",
                    n => n,
                }).collect();
                PathBuf::from(format!("/root/{}", names.join("/")))
            };
            let (a, b) = (path(&a), path(&b));
            prop_assert_eq!(walked_path_order(&a, &b), a.cmp(&b), "{:?} {:?}", a, b);
        }
    }

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
