//! What a run records, as columnar tables (DESIGN decision 6) and a flat summary.
//!
//! Columns are plain vectors; the binding hands them to Python as buffers. Table and column
//! meanings are documented in docs/results.md.

#[cfg(feature = "parquet")]
pub mod parquet;

/// One column of values. Equality is bitwise for floats (NaN equals NaN), so two runs compare
/// equal exactly when their output is identical.
#[derive(Clone, Debug)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    Str(StrColumn),
}

/// A column of strings, dictionary-encoded: string columns (link, packet kind, AQM variable)
/// take a handful of distinct values, so a row costs a 4-byte code and no allocation.
#[derive(Clone, Debug, Default)]
pub struct StrColumn {
    /// The distinct values, in order of first appearance.
    pub dictionary: Vec<String>,
    /// One index into `dictionary` per row.
    pub codes: Vec<u32>,
}

impl StrColumn {
    /// Appends `value` (a linear search of the dictionary: meant for few distinct values).
    pub fn push(&mut self, value: &str) {
        let code = self.code_of(value);
        self.push_code(code);
    }

    /// The code of `value`, added to the dictionary if it is not there yet (no row is added).
    pub fn code_of(&mut self, value: &str) -> u32 {
        let code = match self.dictionary.iter().position(|d| d == value) {
            Some(i) => i,
            None => {
                self.dictionary.push(value.to_string());
                self.dictionary.len() - 1
            }
        };
        code as u32
    }

    /// Appends a row of the value with `code` (from [`StrColumn::code_of`]): for a caller that
    /// writes the same few values row after row and keeps their codes.
    pub fn push_code(&mut self, code: u32) {
        debug_assert!((code as usize) < self.dictionary.len(), "code {code} outside the dictionary");
        self.codes.push(code);
    }

    pub fn len(&self) -> usize {
        self.codes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    pub fn get(&self, row: usize) -> &str {
        &self.dictionary[self.codes[row] as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.codes.iter().map(|&c| self.dictionary[c as usize].as_str())
    }

    /// The decoded values (for tests and small tables).
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

/// Equal when the decoded values are equal, whatever the dictionary order.
impl PartialEq for StrColumn {
    fn eq(&self, other: &StrColumn) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<S: AsRef<str>> FromIterator<S> for StrColumn {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> StrColumn {
        let mut c = StrColumn::default();
        for s in iter {
            c.push(s.as_ref());
        }
        c
    }
}

impl PartialEq for Column {
    fn eq(&self, other: &Column) -> bool {
        match (self, other) {
            (Column::F64(a), Column::F64(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (Column::I64(a), Column::I64(b)) => a == b,
            (Column::U64(a), Column::U64(b)) => a == b,
            (Column::Bool(a), Column::Bool(b)) => a == b,
            (Column::Str(a), Column::Str(b)) => a == b,
            _ => false,
        }
    }
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table of equally long columns.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: &str) -> Table {
        Table { name: name.into(), columns: Vec::new() }
    }

    pub fn with(mut self, name: &str, col: Column) -> Table {
        if let Some((_, first)) = self.columns.first() {
            assert_eq!(first.len(), col.len(), "column {name} of table {} has a different length", self.name);
        }
        self.columns.push((name.into(), col));
        self
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    pub fn f64s(&self, name: &str) -> &[f64] {
        match self.column(name) {
            Some(Column::F64(v)) => v,
            other => panic!("column {name} of {} is not f64: {other:?}", self.name),
        }
    }

    pub fn u64s(&self, name: &str) -> &[u64] {
        match self.column(name) {
            Some(Column::U64(v)) => v,
            other => panic!("column {name} of {} is not u64: {other:?}", self.name),
        }
    }

    pub fn i64s(&self, name: &str) -> &[i64] {
        match self.column(name) {
            Some(Column::I64(v)) => v,
            other => panic!("column {name} of {} is not i64: {other:?}", self.name),
        }
    }

    pub fn bools(&self, name: &str) -> &[bool] {
        match self.column(name) {
            Some(Column::Bool(v)) => v,
            other => panic!("column {name} of {} is not bool: {other:?}", self.name),
        }
    }
}

/// A value of the run summary.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    F64(f64),
    U64(u64),
    Str(String),
}

/// Everything a run produced.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Results {
    pub tables: Vec<Table>,
    pub summary: Vec<(String, Value)>,
}

impl Results {
    pub fn table(&self, name: &str) -> &Table {
        self.tables.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no table {name}"))
    }

    pub fn get(&self, key: &str) -> f64 {
        match self.summary.iter().find(|(k, _)| k == key).map(|(_, v)| v) {
            Some(Value::F64(v)) => *v,
            Some(Value::U64(v)) => *v as f64,
            other => panic!("summary {key} is not numeric: {other:?}"),
        }
    }
}

/// Jain's fairness index (spec section 23): (sum x)^2 / (n sum x^2); 1.0 for no or all-zero
/// allocations.
pub fn jain_index(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_matches_spec_vector() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0, 0.0]), 0.75);
        assert_eq!(jain_index(&[2.0, 2.0]), 1.0);
    }

    #[test]
    fn str_column_encodes_each_distinct_value_once() {
        let c: StrColumn = ["up", "down", "up", "up", "down"].into_iter().collect();
        assert_eq!(c.dictionary, ["up", "down"]);
        assert_eq!(c.codes, [0, 1, 0, 0, 1]);
        assert_eq!((c.len(), c.get(1)), (5, "down"));
        assert_eq!(c.to_vec(), ["up", "down", "up", "up", "down"]);
        // Equality is on the values, not on the dictionary's order.
        let other = StrColumn { dictionary: vec!["down".into(), "up".into()], codes: vec![1, 0, 1, 1, 0] };
        assert_eq!(c, other);
        let changed = StrColumn { dictionary: other.dictionary.clone(), codes: vec![1, 0, 1, 1, 1] };
        assert_ne!(c, changed);
    }

    /// Codes kept by the caller write the rows `push` would, and coding a value adds no row.
    #[test]
    fn str_column_codes_kept_by_the_caller_write_the_same_rows() {
        let mut by_code = StrColumn::default();
        let (up, down) = (by_code.code_of("up"), by_code.code_of("down"));
        assert_eq!((up, down, by_code.len()), (0, 1, 0));
        assert_eq!(by_code.code_of("up"), up, "a value is coded once");
        for c in [up, down, up, up, down] {
            by_code.push_code(c);
        }
        let by_value: StrColumn = ["up", "down", "up", "up", "down"].into_iter().collect();
        assert_eq!((by_code.dictionary.clone(), by_code.codes.clone()), (by_value.dictionary, by_value.codes));
    }
}
