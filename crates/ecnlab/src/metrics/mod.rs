//! What a run records, as columnar tables (DESIGN decision 6) and a flat summary.
//!
//! Columns are plain vectors; the binding hands them to Python as buffers. Table and column
//! meanings are documented in docs/results.md.

/// One column of values. Equality is bitwise for floats (NaN equals NaN), so two runs compare
/// equal exactly when their output is identical.
#[derive(Clone, Debug)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
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
}
