//! What the cache may hand to the dynamic loader. Every cached kernel is code
//! that runs as the user, so a library is loaded only from a folder no one
//! else can write, only if the user owns it and no one else can write it, and
//! only if the record written beside it when we built it matches: its key,
//! the toolchain identity, the package version and the blake3 of its bytes.
//! Anything else is rebuilt (after one warning naming it and the reason).
use crate::errors::{PkError, PkResult};
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

const PACKAGE: &str = concat!("pykokkos-fuse ", env!("CARGO_PKG_VERSION"));

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The cache root to use for `dir`. A folder of the user's own is used as is;
/// a missing one is created private (0700). A folder others may write (or
/// owned by someone else) is only safe with the sticky bit (as /tmp), which
/// keeps others from replacing what we put in it: then a private per-user
/// folder inside it is used; without it, it is refused.
pub fn private_root(dir: &Path) -> PkResult<PathBuf> {
    let meta = match fs::metadata(dir) {
        Ok(m) => m,
        Err(_) => {
            make_private(dir)?;
            return Ok(dir.to_path_buf());
        }
    };
    if !meta.is_dir() {
        return Err(env_err(format!(
            "cache folder {} is not a folder",
            dir.display()
        )));
    }
    let shared = meta.uid() != euid() || meta.mode() & 0o022 != 0;
    if !shared {
        return Ok(dir.to_path_buf());
    }
    if meta.mode() & libc::S_ISVTX == 0 {
        return Err(env_err(format!(
            "cache folder {} can be written by other users and has no sticky bit: they could \
             replace anything built there, so it is not used; point PK_CACHE_DIR at a folder of \
             your own (or at a sticky shared folder such as /tmp, where a private per-user folder \
             is made inside it)",
            dir.display()
        )));
    }
    let mine = dir.join(format!("pykokkos-fuse-{}", euid()));
    make_private(&mine)?;
    Ok(mine)
}

/// Creates `dir` (parents as the umask says, the folder itself 0700), or
/// checks that an existing one is the user's own and private, tightening
/// the mode of one the user owns.
pub fn make_private(dir: &Path) -> PkResult<()> {
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent)?;
    }
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e.into()),
    }
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != euid() {
        return Err(env_err(format!(
            "{} exists but is not a folder owned by you: the cache will not use it",
            dir.display()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

fn env_err(msg: String) -> PkError {
    PkError::Environment(msg)
}

/// The record kept beside a library: what it was built for and its bytes' hash.
#[derive(serde::Serialize, serde::Deserialize, PartialEq, Eq, Debug)]
struct Record {
    key: String,
    toolchain: String,
    package: String,
    blake3: String,
}

pub fn record_path(so: &Path) -> PathBuf {
    so.with_extension("json")
}

/// Why a cache entry cannot be loaded (None: it can).
pub enum Verdict {
    Trusted,
    Missing,
    Untrusted(String),
}

/// Checks the library at `so` and its record against `key` and `identity`.
pub fn verify(so: &Path, key: &str, identity: &str) -> Verdict {
    let meta = match fs::symlink_metadata(so) {
        Ok(m) => m,
        Err(_) => return Verdict::Missing,
    };
    if let Some(why) = unsafe_file(&meta) {
        return Verdict::Untrusted(why);
    }
    let rec = record_path(so);
    let text = match fs::symlink_metadata(&rec) {
        Err(_) => return Verdict::Untrusted("it has no build record".into()),
        Ok(m) => match unsafe_file(&m) {
            Some(why) => return Verdict::Untrusted(format!("its build record: {why}")),
            None => match fs::read_to_string(&rec) {
                Ok(t) => t,
                Err(e) => return Verdict::Untrusted(format!("its build record: {e}")),
            },
        },
    };
    let Ok(found) = serde_json::from_str::<Record>(&text) else {
        return Verdict::Untrusted("its build record is not one of ours".into());
    };
    if found.key != key || found.toolchain != identity || found.package != PACKAGE {
        return Verdict::Untrusted(
            "its build record is for another kernel, toolchain or package version".into(),
        );
    }
    match fs::read(so) {
        Ok(bytes) if blake3::hash(&bytes).to_hex().as_str() == found.blake3 => Verdict::Trusted,
        Ok(_) => {
            Verdict::Untrusted("its bytes do not match the hash recorded when it was built".into())
        }
        Err(e) => Verdict::Untrusted(e.to_string()),
    }
}

fn unsafe_file(meta: &fs::Metadata) -> Option<String> {
    if !meta.is_file() {
        return Some("it is not a regular file".into());
    }
    if meta.uid() != euid() {
        return Some(format!("it is owned by uid {}, not by you", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "others can write it (mode {:o})",
            meta.mode() & 0o777
        ));
    }
    None
}

/// Writes the record of a freshly built library (at `tmp_so`, about to be
/// renamed to `so`), itself through a temporary file and a rename.
pub fn write_record(tmp_so: &Path, so: &Path, key: &str, identity: &str) -> PkResult<()> {
    let rec = Record {
        key: key.to_string(),
        toolchain: identity.to_string(),
        package: PACKAGE.to_string(),
        blake3: blake3::hash(&fs::read(tmp_so)?).to_hex().to_string(),
    };
    let path = record_path(so);
    let tmp = tmp_so.with_extension("json.tmp");
    fs::write(
        &tmp,
        serde_json::to_string(&rec).expect("a record serializes"),
    )?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o600))?;
    fs::rename(&tmp, &path)?;
    Ok(())
}

/// One warning per path and process: a cache entry that was not loaded.
pub fn warn_untrusted(so: &Path, why: &str) {
    static WARNED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    if WARNED.lock().insert(so.to_path_buf()) {
        tracing::warn!(path = %so.display(), reason = why, "cached kernel not loaded");
        eprintln!(
            "pykokkos: warning: not loading cached kernel {}: {why}; rebuilding it",
            so.display()
        );
    }
}

/// An exclusive lock held until dropped: one build of a key (or of the
/// precompiled header) at a time across processes and threads; the others
/// wait, then find the result.
pub struct Lock(#[allow(dead_code)] fs::File);

pub fn lock(dir: &Path, name: &str) -> PkResult<Lock> {
    let locks = dir.join("locks");
    make_private(&locks)?;
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(locks.join(format!("{name}.lock")))?;
    // flock(2): released when the file closes (the Lock drops, or the
    // process dies); a signal may interrupt the wait.
    loop {
        match f.lock() {
            Ok(()) => return Ok(Lock(f)),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
}
