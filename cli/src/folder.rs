//! The report folder: checked before any GPU work, and written atomically, so that a run
//! that is interrupted keeps a consistent report of what it measured so far.

use anyhow::{Context, Result};
use rust_gemm::harness::report::{Record, write_report};
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// A report folder that exists and takes files.
#[derive(Debug)]
pub struct ReportFolder {
    dir: PathBuf,
}

impl ReportFolder {
    /// Creates `dir` if needed and checks that a file can be written into it (by writing and
    /// removing one), so that a long GPU run never ends in a folder it cannot write.
    pub fn open(dir: &Path) -> Result<Self> {
        fs::create_dir_all(dir)
            .with_context(|| format!("report folder {}: cannot create it", dir.display()))?;
        let probe = dir.join(format!(".sgemm-ladder-probe-{}", std::process::id()));
        fs::write(&probe, b"")
            .with_context(|| format!("report folder {}: cannot write into it", dir.display()))?;
        fs::remove_file(&probe).with_context(|| {
            format!(
                "report folder {}: cannot remove {}",
                dir.display(),
                probe.display()
            )
        })?;
        Ok(ReportFolder {
            dir: dir.to_path_buf(),
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The records of the folder's results.json; none if there is no such file.
    pub fn read_results(&self) -> Result<Vec<Record>> {
        let path = self.dir.join("results.json");
        match fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{} is not a results.json", path.display())),
            Err(err) if err.kind() == ErrorKind::NotFound => Ok(Vec::new()),
            Err(err) => Err(err).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Writes results.json, results.md and the plots of `records` (see
    /// [`write_report`]), each file atomically: the report is written into a staging folder
    /// inside this one, and each file is then renamed over the one it replaces, so a reader
    /// (or an interrupted run) never sees a half-written file.
    pub fn write(&self, records: &[Record], command: &str, device: &str) -> Result<()> {
        let context = || format!("writing the report to {}", self.dir.display());
        let staging = self
            .dir
            .join(format!(".sgemm-ladder-staging-{}", std::process::id()));
        if staging.exists() {
            fs::remove_dir_all(&staging).with_context(context)?;
        }
        write_report(&staging, records, command, device).with_context(context)?;
        let mut files: Vec<PathBuf> = fs::read_dir(&staging)
            .with_context(context)?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .with_context(context)?;
        // results.json last: once it has the new records, the Markdown and plots already do.
        files.sort_by_key(|path| path.file_name() == Some("results.json".as_ref()));
        for file in &files {
            let name = file.file_name().expect("read_dir gives named entries");
            fs::rename(file, self.dir.join(name)).with_context(context)?;
        }
        fs::remove_dir(&staging).with_context(context)
    }
}

/// The folder's `earlier` records with `new` ones added, replacing the earlier records of the
/// same key ([`Record::key`]: kernel, shape and what else tells two measurements apart).
pub fn merged(earlier: &[Record], new: &[Record]) -> Vec<Record> {
    let keys: std::collections::HashSet<_> = new.iter().map(Record::key).collect();
    earlier
        .iter()
        .filter(|r| !keys.contains(&r.key()))
        .chain(new)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("sgemm-ladder-folder-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn open_creates_the_folder_and_leaves_nothing_behind() {
        let dir = scratch("open").join("nested");
        let folder = ReportFolder::open(&dir).unwrap();
        assert_eq!(folder.dir(), dir);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        assert!(folder.read_results().unwrap().is_empty());
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn open_names_the_folder_it_cannot_create() {
        let dir = scratch("blocked");
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        fs::write(&file, "x").unwrap();
        let err = ReportFolder::open(&file.join("report")).unwrap_err();
        assert!(
            format!("{err:#}").contains(&file.join("report").display().to_string()),
            "{err:#}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn write_replaces_the_files_and_removes_its_staging_folder() {
        let dir = scratch("write");
        let folder = ReportFolder::open(&dir).unwrap();
        fs::write(dir.join("results.json"), "old").unwrap();
        folder.write(&[], "sgemm-ladder test", "no device").unwrap();
        assert_eq!(folder.read_results().unwrap(), Vec::<Record>::new());
        let mut names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["results.json", "results.md"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
