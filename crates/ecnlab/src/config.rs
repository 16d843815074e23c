//! Configuration errors: every invalid field is reported as `path (value) rule`. Below every
//! module that validates parameters (scenario, queue disciplines, workloads), so none of them
//! needs another to say what is wrong.

use std::fmt;

/// A configuration error: `path (value) rule`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    pub value: String,
    pub rule: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}: {}", self.path, self.rule)
        } else {
            write!(f, "{} ({}) {}", self.path, self.value, self.rule)
        }
    }
}

impl std::error::Error for ConfigError {}

/// `path` must be positive and finite.
pub(crate) fn positive(v: f64, path: impl fmt::Display) -> Result<(), ConfigError> {
    check(v > 0.0 && v.is_finite(), path, v, "must be positive")
}

/// `path` must be zero or positive, and finite.
pub(crate) fn non_negative(v: f64, path: impl fmt::Display) -> Result<(), ConfigError> {
    check(v >= 0.0 && v.is_finite(), path, v, "must be zero or positive")
}

/// Returns an error for `path` unless `ok`. The path and the rule are written out only for an
/// error: callers pass `format_args!`, so a valid scenario of many workloads formats nothing.
pub(crate) fn check(ok: bool, path: impl fmt::Display, value: impl fmt::Display, rule: impl fmt::Display) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError { path: path.to_string(), value: value.to_string(), rule: rule.to_string() })
    }
}

/// Decoding of internally tagged configuration enums whose variants wrap a parameter struct.
///
/// serde's own decoding of such enums buffers the body, so an error inside it (a wrong type,
/// an unknown field) loses its path. Here the body is decoded on its own with its path
/// tracked, and the error carries that inner path to [`Scenario::from_json`], which joins it to
/// the outer one: `topology.bottleneck.queue.aqm.w_q: invalid type: ...`.
pub(crate) mod tagged {
    use serde::de::{DeserializeOwned, Error};
    use serde::{Deserialize, Deserializer};
    use serde_json::{Map, Value};

    /// Separates an inner path from the message in an error's text.
    pub const INNER_PATH: char = '\u{1}';

    /// Reads a table, takes its `tag` out and checks it names a variant.
    pub fn split<'de, D: Deserializer<'de>>(
        d: D,
        tag: &'static str,
        variants: &'static [&'static str],
    ) -> Result<(String, Value), D::Error> {
        let mut map = Map::<String, Value>::deserialize(d)?;
        let kind = match map.remove(tag) {
            Some(Value::String(s)) => s,
            Some(other) => return Err(D::Error::custom(format!("{tag} must be a string, not {other}"))),
            None => return Err(D::Error::missing_field(tag)),
        };
        if !variants.contains(&kind.as_str()) {
            let known = variants.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ");
            return Err(D::Error::custom(format!(
                "{INNER_PATH}{tag}{INNER_PATH}unknown variant `{kind}`, expected one of {known}"
            )));
        }
        Ok((kind, Value::Object(map)))
    }

    /// Decodes a variant's body; an error names the field inside the body.
    pub fn body<T: DeserializeOwned, E: Error>(body: Value) -> Result<T, E> {
        serde_path_to_error::deserialize(body).map_err(|e| {
            let path = e.path().to_string();
            let message = e.into_inner().to_string();
            match message.strip_prefix(INNER_PATH) {
                // A nested tagged enum already split its message: prefix our part.
                Some(rest) => E::custom(format!("{INNER_PATH}{path}.{rest}")),
                None if path == "." => E::custom(message),
                None => E::custom(format!("{INNER_PATH}{path}{INNER_PATH}{message}")),
            }
        })
    }
}
