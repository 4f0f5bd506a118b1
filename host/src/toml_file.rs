//! Reading kernel TOML files with serde, once for every method: the text parsed to a table, the
//! `method` key, and each method's serde view of it with serde's messages in octile's words.
use crate::error::{OctileError, Result};
use serde::de::DeserializeOwned;

/// A kernel TOML's text as a table (a syntax error names the line and column).
pub fn parse_table(text: &str) -> Result<toml::Table> {
    text.parse().map_err(|e: toml::de::Error| OctileError::InvalidConfig(e.to_string()))
}

/// The `method` key of a kernel TOML: "marginalized" (the default), "shortest_path" or
/// "graphlets".
pub fn method_of(table: &toml::Table) -> Result<&'static str> {
    match table.get("method").map(|v| v.as_str()) {
        None | Some(Some("marginalized")) => Ok("marginalized"),
        Some(Some("shortest_path")) => Ok("shortest_path"),
        Some(Some("graphlets")) => Ok("graphlets"),
        Some(other) => Err(OctileError::InvalidConfig(format!(
            "method must be \"marginalized\", \"shortest_path\" or \"graphlets\", got {}",
            other.map_or("a non-string".to_string(), |s| format!("\"{s}\""))
        ))),
    }
}

/// A method's serde view of a whole kernel TOML; `context` prefixes the message (empty at the top).
pub fn read_table<T: DeserializeOwned>(table: toml::Table, context: &str) -> Result<T> {
    read_value(toml::Value::Table(table), context)
}

/// A method's serde view of one table of a kernel TOML, its errors in octile's words: serde's
/// "unknown field `x`, expected one of `a`, `b`" becomes "unknown key 'x'; known keys: a, b",
/// "unknown variant" an unknown kernel, "missing field" a missing key.
pub fn read_value<T: DeserializeOwned>(value: toml::Value, context: &str) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        // toml adds "in KEY" lines of its own: the path says it
        let msg = in_our_words(e.inner().to_string().lines().next().unwrap_or(""));
        // a wrong value names its key (`q: invalid type: ...`), a key message its table
        // (`[path_length]: missing h`); the top level needs no name
        let table = |p: &str| if p.is_empty() || p == "." { String::new() } else { format!("[{p}]: ") };
        let at = if msg.starts_with("unknown key") {
            table(path.rsplit_once('.').map_or("", |(parent, _)| parent))
        } else if msg.starts_with("unknown kernel") || msg.starts_with("missing") {
            table(path.strip_suffix(".kernel").unwrap_or(&path).trim_end_matches("kernel"))
        } else if path == "." {
            String::new()
        } else {
            format!("{path}: ")
        };
        OctileError::InvalidConfig(format!("{context}{at}{msg}"))
    })
}

/// serde's messages about keys and tags, as octile's readers have always put them.
fn in_our_words(msg: &str) -> String {
    let names = |list: &str| list.replace('`', "").replace(" or ", ", ");
    if let Some(rest) = msg.strip_prefix("unknown field `")
        && let Some((key, expected)) = rest.split_once('`')
    {
        let known = expected.trim_start_matches(", expected one of ").trim_start_matches(", expected ").trim_start_matches(", there are no fields");
        return format!("unknown key '{key}'; known keys: {}", if known.is_empty() { "none".to_string() } else { names(known) });
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `")
        && let Some((name, expected)) = rest.split_once('`')
    {
        let known = expected.trim_start_matches(", expected one of ").trim_start_matches(", expected ");
        return format!("unknown kernel '{name}'; known: {}", names(known));
    }
    if let Some(rest) = msg.strip_prefix("missing field `")
        && let Some((key, _)) = rest.split_once('`')
    {
        return if key == "kernel" { "missing kernel = \"...\" (which base kernel)".to_string() } else { format!("missing {key}") };
    }
    msg.trim_end().to_string()
}
