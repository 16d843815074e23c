//! Thin PyO3 bindings of the ecnlab simulator: parse and validate a scenario, advance a
//! simulation in chunks with the GIL released, hand the result tables over as buffers.
//! Python owns progress display, storage and everything else (DESIGN decision 8).

use ecnlab::metrics::{Column, Value};
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

#[pyclass(module = "ecnlab._core")]
struct Simulation {
    sim: CoreSimulation,
    results: Option<ecnlab::metrics::Results>,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(config_json: &str, seed: u64) -> PyResult<Self> {
        let scenario = parse(config_json)?;
        let sim = CoreSimulation::new(scenario, seed).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Simulation { sim, results: None })
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.now()
    }

    #[getter]
    fn end_ns(&self) -> u64 {
        self.sim.end()
    }

    #[getter]
    fn events(&self) -> u64 {
        self.sim.events_processed()
    }

    /// Advances to min(t_ns, end) with the GIL released; True once the end is reached.
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<bool> {
        if self.results.is_some() {
            return Err(PyRuntimeError::new_err("the simulation has been finalized"));
        }
        let sim = &mut self.sim;
        Ok(py.detach(move || sim.run_until(t_ns)))
    }

    /// The result tables: name -> column -> (dtype, little-endian bytes), or for strings
    /// ("dict", list[str] dictionary, little-endian u32 codes).
    /// Finalizes the run at the current time on first call.
    fn results<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.results.is_none() {
            let sim = &mut self.sim;
            self.results = Some(py.detach(move || sim.finish()));
        }
        let res = self.results.as_ref().expect("set above");
        let out = PyDict::new(py);
        for t in &res.tables {
            let cols = PyDict::new(py);
            for (name, col) in &t.columns {
                let v: Bound<'py, PyAny> = match col {
                    Column::F64(v) => buffer(py, "f64", v.iter().flat_map(|x| x.to_le_bytes()).collect())?,
                    Column::I64(v) => buffer(py, "i64", v.iter().flat_map(|x| x.to_le_bytes()).collect())?,
                    Column::U64(v) => buffer(py, "u64", v.iter().flat_map(|x| x.to_le_bytes()).collect())?,
                    Column::Bool(v) => buffer(py, "bool", v.iter().map(|b| *b as u8).collect())?,
                    Column::Str(v) => PyTuple::new(
                        py,
                        [
                            "dict".into_pyobject(py)?.into_any(),
                            PyList::new(py, &v.dictionary)?.into_any(),
                            PyBytes::new(py, &v.codes.iter().flat_map(|c| c.to_le_bytes()).collect::<Vec<u8>>()).into_any(),
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
        let res = self.results.as_ref().ok_or_else(|| PyRuntimeError::new_err("call results() first"))?;
        let d = PyDict::new(py);
        for (k, v) in &res.summary {
            match v {
                Value::F64(x) => d.set_item(k, x)?,
                Value::U64(x) => d.set_item(k, x)?,
                Value::Str(x) => d.set_item(k, x)?,
            }
        }
        Ok(d)
    }
}

fn buffer<'py>(py: Python<'py>, dtype: &str, bytes: Vec<u8>) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyTuple::new(py, [dtype.into_pyobject(py)?.into_any(), PyBytes::new(py, &bytes).into_any()])?.into_any())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
