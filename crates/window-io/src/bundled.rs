//! The bundled real data set, the default input of `windowctl run` and `windowctl dstream`:
//! its path inside the repository and how it is found at run time, from the current directory
//! or from the running binary (not from the folder the binary was built in, which need not
//! exist where it runs).

use std::fmt;
use std::path::{Path, PathBuf};

/// The bundled real data set (NYC flights 2013, keyed by destination, departure delay in
/// minutes; `data/README.md`): its path relative to the repository root. The default input of
/// `windowctl run` and `windowctl dstream`, found by [`find_bundled_data`].
pub const BUNDLED_DATA: &str = "data/nycflights13_dest.csv.gz";

/// The bundled data set was not found: where it was looked for ([`find_bundled_data`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundledDataNotFound {
    /// The current directory, whose folders up to the root were searched (`None`: unknown).
    pub current_dir: Option<PathBuf>,
    /// The running binary's folder, whose folders up to the root were searched (`None`:
    /// unknown).
    pub binary_dir: Option<PathBuf>,
}

impl fmt::Display for BundledDataNotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no input named, and the bundled data set {BUNDLED_DATA} (the default input) was not found"
        )?;
        let place = |dir: &Option<PathBuf>| {
            dir.as_ref()
                .map_or_else(|| "(unknown)".to_owned(), |d| d.display().to_string())
        };
        write!(
            f,
            " in the current directory {} or a folder above it, nor in the folder of this binary {} or a folder above it; name an input with --input (the data set is in the data/ folder of the windowctl repository)",
            place(&self.current_dir),
            place(&self.binary_dir)
        )
    }
}

impl std::error::Error for BundledDataNotFound {}

/// Finds the bundled data set: [`BUNDLED_DATA`] under the current directory or a folder above
/// it (a run from the repository or one of its crates), else under the running binary's folder
/// or a folder above it (`target/release/windowctl` of a checkout, run from anywhere). The
/// path found is absolute when the directory is.
///
/// # Errors
/// [`BundledDataNotFound`] naming both places.
pub fn find_bundled_data() -> Result<PathBuf, BundledDataNotFound> {
    let current_dir = std::env::current_dir().ok();
    let binary_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    find_bundled_data_from(current_dir.as_deref(), binary_dir.as_deref())
}

/// [`find_bundled_data`] from the given current directory and binary folder: the first
/// existing file `DIR/data/nycflights13_dest.csv.gz` for `DIR` the current directory and each
/// folder above it, then the binary's folder and each folder above it.
///
/// # Errors
/// [`BundledDataNotFound`] naming both places.
pub fn find_bundled_data_from(
    current_dir: Option<&Path>,
    binary_dir: Option<&Path>,
) -> Result<PathBuf, BundledDataNotFound> {
    [current_dir, binary_dir]
        .into_iter()
        .flatten()
        .flat_map(Path::ancestors)
        .map(|dir| dir.join(BUNDLED_DATA))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| BundledDataNotFound {
            current_dir: current_dir.map(Path::to_path_buf),
            binary_dir: binary_dir.map(Path::to_path_buf),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_from_the_current_directory_up_then_from_the_binary_up() {
        let root = std::env::temp_dir().join(format!("window-io-bundled-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let repo = root.join("checkout");
        let crate_dir = repo.join("crates/windowctl");
        let bin = repo.join("target/release");
        let elsewhere = root.join("elsewhere/deep");
        for d in [&crate_dir, &bin, &elsewhere, &repo.join("data")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let data = repo.join(BUNDLED_DATA);
        std::fs::write(&data, b"").unwrap();

        let found = |cwd: &Path, exe: Option<&Path>| find_bundled_data_from(Some(cwd), exe);
        assert_eq!(found(&repo, None), Ok(data.clone()));
        assert_eq!(found(&crate_dir, None), Ok(data.clone()));
        assert_eq!(found(&elsewhere, Some(&bin)), Ok(data.clone()));
        // A data/ folder nearer the current directory wins over the binary's.
        let near = root.join("elsewhere").join(BUNDLED_DATA);
        std::fs::create_dir_all(near.parent().unwrap()).unwrap();
        std::fs::write(&near, b"").unwrap();
        assert_eq!(found(&elsewhere, Some(&bin)), Ok(near.clone()));
        std::fs::remove_file(&near).unwrap();

        // Moved away: a clear error naming both places.
        std::fs::remove_file(&data).unwrap();
        let err = found(&elsewhere, Some(&bin)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "no input named, and the bundled data set data/nycflights13_dest.csv.gz (the default input) was not found in the current directory {} or a folder above it, nor in the folder of this binary {} or a folder above it; name an input with --input (the data set is in the data/ folder of the windowctl repository)",
                elsewhere.display(),
                bin.display()
            )
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_path_is_relative_and_names_no_build_machine() {
        assert!(Path::new(BUNDLED_DATA).is_relative());
        assert!(!BUNDLED_DATA.contains(env!("CARGO_MANIFEST_DIR")));
    }
}
