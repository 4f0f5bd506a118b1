//! Phase timings of a shortest-path run, as `log` debug records (for profiling runs: the CLI prints
//! them with `-v` or `OCTILE_TRACE`; nothing else reads them).

/// Log `what`, prefixed by "sp: ", at debug level.
pub fn trace(what: std::fmt::Arguments) {
    log::debug!("sp: {what}");
}
