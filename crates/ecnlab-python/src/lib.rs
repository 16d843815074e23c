//! Thin PyO3 bindings of the ecnlab simulator: parse and validate a scenario, advance a
//! simulation in chunks with the GIL released, hand the result tables over as buffers.
//! Python owns progress display, storage and everything else (DESIGN decision 8).

use ecnlab::metrics::{Column, StrColumn, Table, Value};
use ecnlab::{Scenario, Simulation as CoreSimulation};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

fn parse(config_json: &str) -> PyResult<Scenario> {
    Scenario::from_json(config_json).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The JSON Schema of a scenario (pretty JSON).
#[pyfunction]
fn schema() -> String {
    ecnlab::scenario::json_schema()
}

/// Validates a scenario (JSON text) and returns it with every default filled in.
#[pyfunction]
fn normalize(config_json: &str) -> PyResult<String> {
    Ok(parse(config_json)?.to_json())
}

/// What a run of the scenario will need: {"memory_bytes", "events", "terms": [(path, value,
/// what, bytes)...]} (largest term first).
#[pyfunction]
fn estimate<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let e = ecnlab::sim::estimate(&parse(config_json)?);
    let d = PyDict::new(py);
    d.set_item("memory_bytes", e.memory_bytes)?;
    d.set_item("events", e.events)?;
    let terms: Vec<(String, String, String, f64)> = e.terms.into_iter().map(|t| (t.path, t.value, t.what, t.bytes)).collect();
    d.set_item("terms", terms)?;
    Ok(d)
}

/// Bytes in the units of the estimate's messages (`ecnlab::sim::bytes_text`): `6.5 GB`.
#[pyfunction]
fn bytes_text(b: f64) -> String {
    ecnlab::sim::bytes_text(b)
}

/// Raises ValueError, naming the fields that drive the estimate, if a run of the scenario is
/// estimated to need more than `memory_budget` bytes.
#[pyfunction]
fn check_budget(config_json: &str, memory_budget: f64) -> PyResult<()> {
    ecnlab::sim::estimate(&parse(config_json)?).check(memory_budget).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The offered traffic of workload `index` of a scenario (JSON text) in a run of `seed`, as
/// its own generator draws it with no network (`ecnlab::scenario::export`): JSON text with
/// every `web_sessions` session (pages, objects) or `packmime_http` connection (exchanges).
/// ValueError names the field for an invalid scenario or another kind of workload.
#[pyfunction]
fn workload_plan(py: Python<'_>, config_json: &str, index: usize, seed: u64) -> PyResult<String> {
    let scenario = parse(config_json)?;
    py.detach(move || ecnlab::scenario::export::workload_plan(&scenario, index, seed))
        .map(|v| v.to_string())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The event queue alone (`ecnlab::engine::bench::hold_benchmark`): the hold model with
/// `pending` events of 16 bytes, `events` timed pop-and-push steps, random stream `seed`,
/// run with the GIL released. Returns (wall seconds of the timed steps, checksum of the order).
#[pyfunction]
fn hold_benchmark(py: Python<'_>, pending: usize, events: u64, seed: u64) -> PyResult<(f64, u64)> {
    if pending == 0 {
        return Err(PyValueError::new_err("pending must be at least 1"));
    }
    let h = py.detach(move || ecnlab::engine::bench::hold_benchmark(pending, events, seed));
    Ok((h.seconds, h.checksum))
}

/// Writes one result table to `path` as a Parquet file (`ecnlab::metrics::parquet`), with the
/// GIL released; `columns` is one table of `Simulation.results()`: column -> (dtype, bytes) or
/// ("dict", list[str], codes), in order. Returns (rows, bytes written). The caller syncs and
/// digests the file. ValueError on malformed columns, OSError when the file cannot be written.
#[pyfunction]
fn write_parquet(py: Python<'_>, path: std::path::PathBuf, columns: &Bound<'_, PyDict>) -> PyResult<(usize, u64)> {
    let mut table = Table::new(&path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    let mut rows: Option<(String, usize)> = None;
    for (name, data) in columns.iter() {
        let name: String = name.extract()?;
        let col = native_column(&name, &data)?;
        match &rows {
            Some((first, n)) if *n != col.len() => {
                return Err(PyValueError::new_err(format!(
                    "column {name} has {} rows, column {first} {n}",
                    col.len()
                )))
            }
            Some(_) => {}
            None => rows = Some((name.clone(), col.len())),
        }
        table.columns.push((name, col));
    }
    py.detach(move || -> std::io::Result<(usize, u64)> {
        // The writer buffers its output itself.
        let written = ecnlab::metrics::parquet::write_table(&table, std::fs::File::create(&path)?)?;
        Ok((written.rows, written.bytes))
    })
    .map_err(|e| if e.kind() == std::io::ErrorKind::InvalidData { PyValueError::new_err(e.to_string()) } else { e.into() })
}

/// One column of `Simulation.results()` back into a core column (the bytes are copied).
fn native_column(name: &str, data: &Bound<'_, PyAny>) -> PyResult<Column> {
    let bad = |what: &str| PyValueError::new_err(format!("column {name}: {what}"));
    let tuple = data.cast::<PyTuple>().map_err(|_| bad("expected a tuple"))?;
    let tag: String = tuple.get_item(0)?.extract()?;
    if tag == "dict" {
        if tuple.len() != 3 {
            return Err(bad("expected ('dict', dictionary, codes)"));
        }
        let dictionary: Vec<String> = tuple.get_item(1)?.extract()?;
        let codes = fixed::<4>(&tuple.get_item(2)?, name)?.map(u32::from_le_bytes).collect();
        return Ok(Column::Str(StrColumn { dictionary, codes }));
    }
    if tuple.len() != 2 {
        return Err(bad("expected (dtype, bytes)"));
    }
    let raw = tuple.get_item(1)?;
    Ok(match tag.as_str() {
        "f64" => Column::F64(fixed::<8>(&raw, name)?.map(f64::from_le_bytes).collect()),
        "i64" => Column::I64(fixed::<8>(&raw, name)?.map(i64::from_le_bytes).collect()),
        "u64" => Column::U64(fixed::<8>(&raw, name)?.map(u64::from_le_bytes).collect()),
        "bool" => Column::Bool(fixed::<1>(&raw, name)?.map(|[b]| b != 0).collect()),
        other => return Err(bad(&format!("unknown dtype {other:?}"))),
    })
}

/// The values of a little-endian buffer of `N`-byte values.
fn fixed<'a, const N: usize>(raw: &'a Bound<'_, PyAny>, name: &str) -> PyResult<impl Iterator<Item = [u8; N]> + 'a> {
    let bytes = raw.cast::<PyBytes>().map_err(|_| PyValueError::new_err(format!("column {name}: expected bytes")))?.as_bytes();
    if bytes.len() % N != 0 {
        return Err(PyValueError::new_err(format!("column {name}: {} bytes is not a whole number of {N}-byte values", bytes.len())));
    }
    Ok(bytes.chunks_exact(N).map(|c| c.try_into().expect("chunks of N bytes")))
}

/// A run in progress, or what is left of it once its tables have been handed over.
enum Run {
    Running(Box<CoreSimulation>),
    /// The simulation was dropped when its tables were taken (its connections, packets and
    /// events are no longer needed, and the tables are not kept twice): its clock, event count
    /// and summary remain.
    Finished { now: u64, end: u64, events: u64, summary: Vec<(String, Value)> },
}

#[pyclass(module = "ecnlab._core")]
struct Simulation {
    run: Run,
}

#[pymethods]
impl Simulation {
    /// Builds the simulation; with `memory_budget` (bytes), refuses a scenario whose estimated
    /// memory exceeds it (ValueError naming the fields that drive the estimate).
    #[new]
    #[pyo3(signature = (config_json, seed, memory_budget=None))]
    fn new(config_json: &str, seed: u64, memory_budget: Option<f64>) -> PyResult<Self> {
        let scenario = parse(config_json)?;
        if let Some(budget) = memory_budget {
            ecnlab::sim::estimate(&scenario).check(budget).map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        // Building the network and the bulk flows takes at most a few seconds (the limits
        // bound hosts and flows); the GIL is held meanwhile.
        let sim = CoreSimulation::new(scenario, seed).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Simulation { run: Run::Running(Box::new(sim)) })
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        match &self.run {
            Run::Running(sim) => sim.now(),
            Run::Finished { now, .. } => *now,
        }
    }

    #[getter]
    fn end_ns(&self) -> u64 {
        match &self.run {
            Run::Running(sim) => sim.end(),
            Run::Finished { end, .. } => *end,
        }
    }

    #[getter]
    fn events(&self) -> u64 {
        match &self.run {
            Run::Running(sim) => sim.events_processed(),
            Run::Finished { events, .. } => *events,
        }
    }

    /// Advances to min(t_ns, end), or by at most `max_events` events, with the GIL released;
    /// True once the end is reached.
    #[pyo3(signature = (t_ns, max_events=u64::MAX))]
    fn run_until(&mut self, py: Python<'_>, t_ns: u64, max_events: u64) -> PyResult<bool> {
        let Run::Running(sim) = &mut self.run else {
            return Err(PyRuntimeError::new_err("the simulation has been finalized"));
        };
        Ok(py.detach(move || sim.advance(t_ns, max_events)))
    }

    /// The result tables: name -> column -> (dtype, little-endian bytes), or for strings
    /// ("dict", list[str] dictionary, little-endian u32 codes).
    /// Finalizes the run at the current time and hands the tables over once: the simulation
    /// is dropped first and each column freed as soon as it is copied, so the run's peak
    /// memory holds its state and tables, or its tables in both forms, never all three. A
    /// second call raises RuntimeError.
    fn results<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Run::Running(sim) = &mut self.run else {
            return Err(PyRuntimeError::new_err("results() was already called: the tables are handed over once"));
        };
        let (now, end) = (sim.now(), sim.end());
        let (res, events) = py.detach(|| {
            let res = sim.finish();
            (res, sim.events_processed())
        });
        let taken = std::mem::replace(&mut self.run, Run::Finished { now, end, events, summary: res.summary });
        py.detach(move || drop(taken));
        let out = PyDict::new(py);
        for t in res.tables {
            let cols = PyDict::new(py);
            for (name, col) in t.columns {
                let v: Bound<'py, PyAny> = match col {
                    Column::F64(v) => buffer(py, "f64", le_bytes(py, &v, |x| x.to_le_bytes())?)?,
                    Column::I64(v) => buffer(py, "i64", le_bytes(py, &v, |x| x.to_le_bytes())?)?,
                    Column::U64(v) => buffer(py, "u64", le_bytes(py, &v, |x| x.to_le_bytes())?)?,
                    Column::Bool(v) => buffer(py, "bool", le_bytes(py, &v, |b| [*b as u8])?)?,
                    Column::Str(v) => PyTuple::new(
                        py,
                        [
                            "dict".into_pyobject(py)?.into_any(),
                            PyList::new(py, &v.dictionary)?.into_any(),
                            le_bytes(py, &v.codes, |c| c.to_le_bytes())?.into_any(),
                        ],
                    )?
                    .into_any(),
                };
                cols.set_item(name, v)?;
            }
            out.set_item(&t.name, cols)?;
        }
        Ok(out)
    }

    /// The run summary (valid after `results()`).
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Run::Finished { summary, .. } = &self.run else {
            return Err(PyRuntimeError::new_err("call results() first"));
        };
        let d = PyDict::new(py);
        for (k, v) in summary {
            match v {
                Value::F64(x) => d.set_item(k, x)?,
                Value::U64(x) => d.set_item(k, x)?,
                Value::Str(x) => d.set_item(k, x)?,
            }
        }
        Ok(d)
    }
}

fn buffer<'py>(py: Python<'py>, dtype: &str, bytes: Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyTuple::new(py, [dtype.into_pyobject(py)?.into_any(), bytes.into_any()])?.into_any())
}

/// The values of a column as Python bytes, each `N` bytes from `encode`, written straight into
/// the bytes object (collecting into a `Vec<u8>` first grew it by doubling, then copied it: the
/// 3.5 M rows of a run's sampled tables took 48 ms).
fn le_bytes<'py, T, const N: usize>(py: Python<'py>, values: &[T], encode: impl Fn(&T) -> [u8; N]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * N, |buf| {
        for (out, v) in buf.chunks_exact_mut(N).zip(values) {
            out.copy_from_slice(&encode(v));
        }
        Ok(())
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("built_with_pgo", ecnlab::BUILT_WITH_PGO)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(bytes_text, m)?)?;
    m.add_function(wrap_pyfunction!(check_budget, m)?)?;
    m.add_function(wrap_pyfunction!(hold_benchmark, m)?)?;
    m.add_function(wrap_pyfunction!(workload_plan, m)?)?;
    m.add_function(wrap_pyfunction!(write_parquet, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
