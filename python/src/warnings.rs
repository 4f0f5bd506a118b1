//! The library's `log` warnings (e.g. each record `read(..., skip_invalid=True)` skips) on stderr,
//! "warning: …", as the CLI prints them; the Python side adds a `warnings.warn` with the count.
use log::{Level, LevelFilter, Log, Metadata, Record};

struct Stderr;

static STDERR: Stderr = Stderr;

impl Log for Stderr {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= Level::Warn && m.target().starts_with("octile")
    }

    fn log(&self, r: &Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("{}: {}", if r.level() == Level::Error { "error" } else { "warning" }, r.args());
        }
    }

    fn flush(&self) {}
}

/// Install the sink (once per process; a logger installed before is kept).
pub fn install() {
    if log::set_logger(&STDERR).is_ok() {
        log::set_max_level(LevelFilter::Warn);
    }
}
