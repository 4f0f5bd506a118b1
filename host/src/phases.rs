//! Phase marks of the calling thread: while a caller records ([`recorded`]), the solvers note
//! when each phase of a call ended ([`mark`]: paired, packed, planned, submitted, back, …) on the
//! thread that runs the call. The CLI's tiled `gram` lists them per tile in its summary's
//! timeline, which shows where a tile's time went without synchronizing anything. Without a
//! recording, [`mark`] is one thread-local read. Imports nothing else of the crate.
use std::cell::RefCell;
use std::time::Instant;

thread_local! {
    static MARKS: RefCell<Option<Vec<(&'static str, Instant)>>> = const { RefCell::new(None) };
}

/// Note that phase `what` ended now, if this thread is recording.
pub fn mark(what: &'static str) {
    MARKS.with(|m| {
        if let Some(v) = m.borrow_mut().as_mut() {
            v.push((what, Instant::now()));
        }
    });
}

/// Run `f`, recording the marks this thread makes meanwhile (in order; a recording already under
/// way is set aside and restored after).
pub fn recorded<R>(f: impl FnOnce() -> R) -> (R, Vec<(&'static str, Instant)>) {
    /// Puts the outer recording back when dropped: after `f`, or while `f` panics.
    struct Restore(Option<Vec<(&'static str, Instant)>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            MARKS.with(|m| *m.borrow_mut() = outer);
        }
    }
    let restore = Restore(MARKS.with(|m| m.borrow_mut().replace(Vec::new())));
    let r = f();
    let marks = MARKS.with(|m| m.borrow_mut().take()).unwrap_or_default();
    drop(restore);
    (r, marks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_recorded_in_order_only_while_recording_and_nest() {
        mark("before");
        let ((), outer) = recorded(|| {
            mark("a");
            let ((), inner) = recorded(|| mark("inner"));
            assert_eq!(inner.iter().map(|m| m.0).collect::<Vec<_>>(), ["inner"]);
            mark("b");
        });
        assert_eq!(outer.iter().map(|m| m.0).collect::<Vec<_>>(), ["a", "b"]);
        assert!(outer[0].1 <= outer[1].1);
        // another thread's marks are its own
        let ((), mine) = recorded(|| std::thread::spawn(|| mark("elsewhere")).join().unwrap());
        assert!(mine.is_empty());
        // a panic inside a recording leaves the thread not recording (or the outer recording)
        assert!(std::panic::catch_unwind(|| recorded(|| panic!("in f"))).is_err());
        mark("after");
        let ((), after) = recorded(|| ());
        assert!(after.is_empty());
    }
}
