//! Writing a new file without ever replacing one: the content goes to a hidden temporary name
//! in the same folder, then is hard-linked to its final name, which fails if that name exists
//! (so two runs at once cannot overwrite each other), then the temporary name is removed.
//! An agent listing the folder never sees a half-written session under the final name.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` if nothing is there. Returns false when the file already existed
/// (another run made it first), true when this call created it.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no parent folder"))?;
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.trail-{}.tmp", std::process::id()));
    {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    let linked = match fs::hard_link(&tmp, path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: rename, after checking the name is free.
        Err(_) if !path.exists() => fs::rename(&tmp, path).map(|()| true),
        Err(e) => Err(e),
    };
    let _ = fs::remove_file(&tmp);
    linked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/s.jsonl");
        assert!(write_new(&p, b"one").unwrap());
        assert!(!write_new(&p, b"two").unwrap());
        assert_eq!(fs::read(&p).unwrap(), b"one");
        let names: Vec<_> = fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left behind");
    }
}
