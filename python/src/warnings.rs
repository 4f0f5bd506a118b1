//! The library's `log` records on stderr, as the CLI prints them: warnings always (e.g. each
//! record `read(..., skip_invalid=True)` skips, "warning: …"; the Python side adds a
//! `warnings.warn` with the count), the solvers' phase timings when `OCTILE_TRACE` is set.
use log::{Level, LevelFilter, Log, Metadata, Record};

struct Stderr;

static STDERR: Stderr = Stderr;

impl Log for Stderr {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= log::max_level() && m.target().starts_with("octile")
    }

    fn log(&self, r: &Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        match r.level() {
            Level::Error => eprintln!("error: {}", r.args()),
            Level::Warn => eprintln!("warning: {}", r.args()),
            _ => eprintln!("{}", r.args()),
        }
    }

    fn flush(&self) {}
}

/// Install the sink (once per process; a logger installed before is kept).
pub fn install() {
    if log::set_logger(&STDERR).is_ok() {
        log::set_max_level(if std::env::var_os("OCTILE_TRACE").is_some() { LevelFilter::Debug } else { LevelFilter::Warn });
    }
}
