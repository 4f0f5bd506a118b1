//! Phase timings of a shortest-path run on stderr when `OCTILE_TRACE` is set (for profiling runs;
//! nothing else reads them).

/// Print `what` prefixed by "sp: " when `OCTILE_TRACE` is set.
pub fn trace(what: std::fmt::Arguments) {
    if std::env::var_os("OCTILE_TRACE").is_some() {
        eprintln!("sp: {what}");
    }
}
