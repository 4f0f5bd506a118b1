//! A sink for the library's `log` records on stderr, for applications to install: the `octile`
//! command and the Python module do. The library itself never installs it and never writes to
//! stderr. Warnings and errors always print ("warning: skipped: …" for a record read with
//! `skip_invalid`); with `verbose`, or `OCTILE_TRACE` in the environment, the solvers' phase
//! timings too (GPU launches then run one at a time, to be timed).
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

/// Install the sink (once per process; a logger installed before is kept): warnings and errors,
/// and with `verbose` (or `OCTILE_TRACE` in the environment) the debug records too.
pub fn install(verbose: bool) {
    let verbose = verbose || std::env::var_os("OCTILE_TRACE").is_some();
    if log::set_logger(&STDERR).is_ok() {
        log::set_max_level(if verbose { LevelFilter::Debug } else { LevelFilter::Warn });
    }
}
