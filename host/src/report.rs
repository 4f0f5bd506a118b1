//! Run reports: what a method says about how it computed a result (which solver and entries ran,
//! where its primitive map came from, on which device), as typed values. [`Details`] carries one
//! through the Gram driver whatever its type: people read its `Display` (the JSON summary's
//! `details`), JSON summaries serialise it (`report`), and code that knows the method downcasts
//! it back to its type ([`Details::get`]).
//!
//! A base module (with [`crate::error`] and [`crate::matrix`]): it imports nothing of the crate.
use serde::Serialize;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A typed run report: readable (`Display`) and serialisable (`serde::Serialize`). Every type with
/// both is one (a `String` too: the report of a method that only has a line to say).
pub trait RunReport: fmt::Display + fmt::Debug + Send + Sync + 'static {
    /// The report as JSON (its `Serialize` form).
    fn to_json(&self) -> serde_json::Value;
    /// The report, for [`Details::get`].
    fn as_any(&self) -> &dyn Any;
}

impl<T: Serialize + fmt::Display + fmt::Debug + Send + Sync + 'static> RunReport for T {
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// How a result was computed: one method's [`RunReport`], of whatever type.
#[derive(Clone)]
pub struct Details(Arc<dyn RunReport>);

impl Details {
    /// Carry `report`.
    pub fn new(report: impl RunReport) -> Self {
        Details(Arc::new(report))
    }
    /// The report, if it is a `T` (e.g. `octile::mgk::report::MgkReport` for the MGK).
    pub fn get<T: RunReport>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        self.0.to_json()
    }
}

impl Default for Details {
    /// No report (an empty line).
    fn default() -> Self {
        Details::new(String::new())
    }
}

impl From<String> for Details {
    fn from(line: String) -> Self {
        Details::new(line)
    }
}

impl From<&str> for Details {
    fn from(line: &str) -> Self {
        Details::new(line.to_string())
    }
}

impl fmt::Display for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for Details {
    /// Same text and same JSON.
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string() && self.to_json() == other.to_json()
    }
}

impl Serialize for Details {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, PartialEq)]
    struct Toy {
        launches: usize,
    }

    impl fmt::Display for Toy {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{} launch(es)", self.launches)
        }
    }

    #[test]
    fn details_keep_the_type_the_text_and_the_json() {
        let d = Details::new(Toy { launches: 3 });
        assert_eq!(d.to_string(), "3 launch(es)");
        assert_eq!(d.to_json(), serde_json::json!({"launches": 3}));
        assert_eq!(d.get::<Toy>(), Some(&Toy { launches: 3 }));
        assert!(d.get::<String>().is_none());
        let line = Details::from("a line");
        assert_eq!((line.to_string(), serde_json::to_value(&line).unwrap()), ("a line".to_string(), serde_json::json!("a line")));
        assert_eq!(d.clone(), d);
        assert_ne!(d, line);
    }
}
