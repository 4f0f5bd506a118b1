//! What a request needs in memory against what there is, checked before allocating: a request far
//! past memory (a Gram matrix of millions of graphs, a generator asked for 10⁹ graphs) is a typed
//! error naming the need, not an abort ("memory allocation of … bytes failed") minutes later.
use crate::error::{OctileError, Result};

/// Bytes this process may still allocate, and which limit says so: the least of the memory the
/// kernel reports as available (`MemAvailable` of `/proc/meminfo`), what is left under the
/// address-space limit (`ulimit -v`, RLIMIT_AS, less the process's present size) and what is left
/// under its cgroup's memory limit (containers, batch schedulers: `memory.max` less
/// `memory.current`, cgroup v2). `None` where none is known.
pub fn available() -> Option<(u64, &'static str)> {
    [
        meminfo_available().map(|b| (b, "available memory")),
        address_space_left().map(|b| (b, "address-space limit (ulimit -v)")),
        cgroup_left().map(|b| (b, "cgroup memory limit")),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|(b, _)| *b)
}

/// Bytes available: [`available`]'s.
pub fn available_bytes() -> Option<u64> {
    available().map(|(b, _)| b)
}

fn meminfo_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// RLIMIT_AS less the process's virtual size (`VmSize`), when there is such a limit. The thread
/// pool's workers are started and have allocated once before the size is read: each then holds its
/// stack and its allocator arena (glibc reserves 64 MiB of address space for each thread's arena),
/// which the work after a check would otherwise add — under `ulimit -v 200000` a 33 MiB graph that
/// passed the check aborted in an allocation (2 workers: 2 × (64 + 2) MiB not yet counted).
fn address_space_left() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    // once a process (the workers and their arenas then stay): a later check never waits on a
    // pool another caller keeps busy
    static STARTED: std::sync::Once = std::sync::Once::new();
    if rayon::current_thread_index().is_none() {
        STARTED.call_once(|| drop(rayon::broadcast(|_| drop(std::hint::black_box(Vec::<u8>::with_capacity(64))))));
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status.lines().find(|l| l.starts_with("VmSize:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(lim.rlim_cur.saturating_sub(kib.saturating_mul(1024)))
}

/// The cgroup memory limit of this process less its usage, when it has a limit: cgroup v2
/// (`memory.max`, `memory.current`) or v1 (`memory.limit_in_bytes`, `memory.usage_in_bytes`).
fn cgroup_left() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |p: std::path::PathBuf| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() }; // "max": no limit
    let root = std::path::Path::new("/sys/fs/cgroup");
    let v2 = text.lines().find_map(|l| l.strip_prefix("0::")).map(|p| root.join(p.trim_start_matches('/')));
    if let Some(dir) = v2
        && let (Some(max), Some(current)) = (read(dir.join("memory.max")), read(dir.join("memory.current")))
    {
        return Some(max.saturating_sub(current));
    }
    let v1 = text.lines().find_map(|l| l.split_once(":memory:").map(|(_, p)| root.join("memory").join(p.trim_start_matches('/'))))?;
    let (max, current) = (read(v1.join("memory.limit_in_bytes"))?, read(v1.join("memory.usage_in_bytes"))?);
    // v1 reports "no limit" as a huge number (a page-rounded i64::MAX)
    (max < 1 << 60).then(|| max.saturating_sub(current))
}

/// What to do about too many graphs.
pub const FEWER_GRAPHS: &str = "use fewer graphs, or compute K(X) in blocks K(X_i, X_j)";

/// `need` bytes for `what` (a request over many graphs: the hint is [`FEWER_GRAPHS`]): an error
/// when they pass `limit` (the user's `--max-memory`) or the memory available.
pub fn check(need: u128, limit: Option<u64>, what: impl FnOnce() -> String) -> Result<()> {
    check_with(need, limit, what, FEWER_GRAPHS)
}

/// A limit every check of this process honours, as if passed to each ([`set_process_limit`]).
static PROCESS_LIMIT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Make `limit` (a command's `--max-memory`) the limit of every check in this process, also those
/// made deep in the library without a limit of their own (readers, generators, the graphlet
/// transform); `None`: no such limit.
pub fn set_process_limit(limit: Option<u64>) {
    PROCESS_LIMIT.store(limit.unwrap_or(u64::MAX), std::sync::atomic::Ordering::Relaxed);
}

/// [`check`] with another `hint` for the user.
pub fn check_with(need: u128, limit: Option<u64>, what: impl FnOnce() -> String, hint: &'static str) -> Result<()> {
    let process = PROCESS_LIMIT.load(std::sync::atomic::Ordering::Relaxed);
    let limit = match limit {
        Some(l) => Some(l.min(process)),
        None => (process != u64::MAX).then_some(process),
    };
    let (have, of) = match (limit, available()) {
        (Some(l), Some((a, of))) if a < l => (a, of),
        (Some(l), _) => (l, "--max-memory limit"),
        (None, Some((a, of))) => (a, of),
        (None, None) => return Ok(()),
    };
    if need <= have as u128 {
        return Ok(());
    }
    Err(OctileError::TooLarge { what: what(), need_bytes: need, have_bytes: have, of, hint })
}

/// `need` bytes of GPU memory for `what`: an error when they pass `free` (the device's free memory,
/// or the budget a solver keeps within it), before any allocation — not a CUDA out-of-memory error
/// part way.
pub fn check_gpu(need: u128, free: usize, what: impl FnOnce() -> String, hint: &'static str) -> Result<()> {
    if need <= free as u128 {
        return Ok(());
    }
    Err(OctileError::TooLarge { what: what(), need_bytes: need, have_bytes: free as u64, of: "free GPU memory", hint })
}

pub use crate::error::human_bytes as human;

/// A size such as "8G", "512M", "64k" or plain bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let (v, mult) = size_parts(s)?;
    (v.is_finite() && v > 0.0 && v * (mult as f64) < u64::MAX as f64).then_some((v * mult as f64) as u64)
}

/// A size's number and its suffix's multiplier ("1.5G": (1.5, 2^30)), unchecked: [`parse_size`]'s
/// parsing, for a message that says why a number is no size (0 or negative).
pub fn size_parts(s: &str) -> Option<(f64, u64)> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&t[..i], 1 << 20),
        (i, 'g' | 'G') => (&t[..i], 1 << 30),
        (i, 't' | 'T') => (&t[..i], 1 << 40),
        _ => (t, 1),
    };
    Some((num.trim().parse().ok()?, mult))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_needs_past_the_limit_are_refused() {
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("1.5k"), Some(1536));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!((parse_size("-1G"), parse_size("lots"), parse_size("")), (None, None, None));
        assert!(check(1000, Some(1 << 20), || "small".into()).is_ok());
        let e = check(3 << 20, Some(1 << 20), || "a 3 MiB thing".into()).unwrap_err().to_string();
        assert!(e.contains("a 3 MiB thing needs 3.0 MiB") && e.contains("1.0 MiB"), "{e}");
        assert_eq!(human(5), "5 bytes");
    }
}
