//! Parquet encoding of a result table (cargo feature `parquet`), so a run can store its
//! tables without the Python package importing pyarrow (issue 21: the fixed cost of a run).
//!
//! The files read back with pyarrow exactly as the ones pyarrow itself writes for the same
//! table (tests/test_native_parquet.py compares both): Arrow infers its types from the Parquet
//! schema written here, which mirrors pyarrow's mapping of the columns' Arrow types:
//!
//! | column | Parquet physical type | logical type | Arrow type read back |
//! |---|---|---|---|
//! | `F64` | DOUBLE | - | double |
//! | `I64` | INT64 | - | int64 |
//! | `U64` | INT64 (bits reinterpreted) | INTEGER(64, unsigned) | uint64 |
//! | `Bool` | BOOLEAN | - | bool |
//! | `Str` | BYTE_ARRAY (dictionary-encoded) | STRING | string |
//!
//! Every field is OPTIONAL with no null: the columns come from `pa.table` as nullable fields,
//! and a REQUIRED field would read back as `not null`. Pages are Zstandard-compressed at level
//! 1, and DOUBLE columns are BYTE_STREAM_SPLIT-encoded (the eight bytes of the values stored
//! as eight streams, so that the similar sign-and-exponent bytes of times, rates and sizes
//! compress together): a web run's tables take 44% fewer bytes than Snappy over plain pages,
//! for about a quarter more time to write (docs/benchmarks.md, "Smaller tables"). The oldest
//! readers the package accepts (pyarrow 14, DuckDB 1.2) read them. The writer does no I/O of
//! its own beyond `out`: the caller opens, syncs and digests the file.

use std::io::{self, Write};
use std::sync::Arc;

use ::parquet::basic::{Compression, Encoding, LogicalType, Repetition, Type as PhysicalType, ZstdLevel};
use ::parquet::column::writer::ColumnWriterImpl;
use ::parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, DoubleType, Int64Type};
use ::parquet::errors::ParquetError;
use ::parquet::file::properties::WriterProperties;
use ::parquet::file::writer::SerializedFileWriter;
use ::parquet::schema::types::{ColumnPath, Type};

use super::{Column, Table};

/// The Zstandard level of the pages, the fastest of the standard levels (the size against
/// level 3 in docs/benchmarks.md).
const ZSTD_LEVEL: i32 = 1;

/// Rows handed to the column writer at a time (a multiple of its 1,024-row mini-batch).
const CHUNK_ROWS: usize = 64 * 1024;

/// What [`write_table`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub rows: usize,
    pub bytes: u64,
}

/// Writes `table` to `out` as one Parquet file (one row group: the tables hold at most a few
/// million rows, the size pyarrow also puts in a single group).
///
/// Errors: an I/O error of `out` as it is; `InvalidData` for a table that cannot be encoded
/// (no columns: Parquet needs at least one field; columns of different lengths; a string code
/// outside its dictionary).
pub fn write_table<W: Write + Send>(table: &Table, out: W) -> io::Result<Written> {
    encode(table, out, CHUNK_ROWS).map_err(|e| match e {
        ParquetError::External(e) => match e.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(e) => io::Error::new(io::ErrorKind::InvalidData, e),
        },
        e => io::Error::new(io::ErrorKind::InvalidData, e),
    })
}

fn encode<W: Write + Send>(table: &Table, out: W, chunk_rows: usize) -> Result<Written, ParquetError> {
    if table.columns.is_empty() {
        return Err(ParquetError::General(format!("table {} has no columns", table.name)));
    }
    let rows = table.rows();
    let mut fields = Vec::with_capacity(table.columns.len());
    // Dictionary encoding (pyarrow's default) only for strings: the numeric columns hold
    // mostly distinct values, where hashing every value buys nothing.
    let mut props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?))
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(rows.max(1)));
    for (name, col) in &table.columns {
        if col.len() != rows {
            return Err(ParquetError::General(format!(
                "column {name} of table {} has {} rows, not {rows}",
                table.name,
                col.len()
            )));
        }
        let (physical, logical) = match col {
            Column::F64(_) => {
                props = props.set_column_encoding(ColumnPath::from(name.as_str()), Encoding::BYTE_STREAM_SPLIT);
                (PhysicalType::DOUBLE, None)
            }
            Column::I64(_) => (PhysicalType::INT64, None),
            Column::U64(_) => (PhysicalType::INT64, Some(LogicalType::integer(64, false))),
            Column::Bool(_) => (PhysicalType::BOOLEAN, None),
            Column::Str(_) => {
                props = props.set_column_dictionary_enabled(ColumnPath::from(name.as_str()), true);
                (PhysicalType::BYTE_ARRAY, Some(LogicalType::String))
            }
        };
        let field = Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()?;
        fields.push(Arc::new(field));
    }
    let schema = Type::group_type_builder("schema").with_fields(fields).build()?;
    let mut writer = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props.build()))?;
    // Every value is present: definition level 1 (the field is optional, its value defined).
    // Columns go to the writer in chunks of `chunk_rows`, so that those that need converting
    // are converted a chunk at a time: a whole column of `ByteArray`s is 32 bytes a row (a
    // 3.2-million-row `aqm_samples` table took two such vectors, 200 MB). The writer checks
    // its page limits every mini-batch (1,024 rows), of which a chunk is a multiple, so the
    // file is the same as from one call (test `chunks_write_the_same_file`).
    let defined = vec![1i16; rows.min(chunk_rows)];
    let mut group = writer.next_row_group()?;
    for (_, col) in &table.columns {
        let mut w = group.next_column()?.expect("one column writer per schema field");
        match col {
            Column::F64(v) => write_chunks(w.typed::<DoubleType>(), v, &defined, chunk_rows)?,
            Column::I64(v) => write_chunks(w.typed::<Int64Type>(), v, &defined, chunk_rows)?,
            // Parquet stores unsigned 64-bit integers as INT64 bit patterns.
            Column::U64(v) => write_converted(w.typed::<Int64Type>(), v, &defined, chunk_rows, |&x| x as i64)?,
            Column::Bool(v) => write_chunks(w.typed::<BoolType>(), v, &defined, chunk_rows)?,
            Column::Str(s) => {
                let dictionary: Vec<ByteArray> =
                    s.dictionary.iter().map(|d| ByteArray::from(d.as_str())).collect();
                if let Some(&bad) = s.codes.iter().find(|&&c| c as usize >= dictionary.len()) {
                    return Err(ParquetError::General(format!(
                        "string code {bad} is outside the dictionary of {} values",
                        dictionary.len()
                    )));
                }
                // ByteArray clones share the dictionary's bytes (reference counted).
                let value = |&c: &u32| dictionary[c as usize].clone();
                write_converted(w.typed::<ByteArrayType>(), &s.codes, &defined, chunk_rows, value)?;
            }
        }
        w.close()?;
    }
    group.close()?;
    writer.finish()?; // the footer: bytes_written now counts the whole file
    let bytes = writer.bytes_written() as u64;
    Ok(Written { rows, bytes })
}

/// Writes `values` in chunks of `chunk_rows`, every value defined (`defined` holds a chunk's
/// definition levels).
fn write_chunks<T: DataType>(
    w: &mut ColumnWriterImpl<'_, T>,
    values: &[T::T],
    defined: &[i16],
    chunk_rows: usize,
) -> Result<(), ParquetError> {
    for part in values.chunks(chunk_rows) {
        w.write_batch(part, Some(&defined[..part.len()]), None)?;
    }
    Ok(())
}

/// As [`write_chunks`], each chunk converted by `convert` into one buffer reused across chunks.
fn write_converted<T: DataType, S>(
    w: &mut ColumnWriterImpl<'_, T>,
    values: &[S],
    defined: &[i16],
    chunk_rows: usize,
    convert: impl Fn(&S) -> T::T,
) -> Result<(), ParquetError> {
    let mut converted = Vec::with_capacity(values.len().min(chunk_rows));
    for part in values.chunks(chunk_rows) {
        converted.clear();
        converted.extend(part.iter().map(&convert));
        w.write_batch(&converted, Some(&defined[..part.len()]), None)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::StrColumn;
    use ::parquet::file::reader::{FileReader, SerializedFileReader};
    use ::parquet::record::Field;

    fn sample(rows: usize) -> Table {
        let strings: StrColumn = (0..rows).map(|i| ["down", "up", "dé"][i % 3]).collect();
        Table::new("t")
            .with("time_s", Column::F64((0..rows).map(|i| if i % 4 == 3 { f64::NAN } else { i as f64 * 0.5 }).collect()))
            .with("delta", Column::I64((0..rows).map(|i| i as i64 - 3).collect()))
            .with("bytes", Column::U64((0..rows).map(|i| u64::MAX - i as u64).collect()))
            .with("ok", Column::Bool((0..rows).map(|i| i % 2 == 0).collect()))
            .with("link", Column::Str(strings))
    }

    fn write(table: &Table) -> Vec<u8> {
        let mut buf = Vec::new();
        let w = write_table(table, &mut buf).unwrap();
        assert_eq!(w.rows, table.rows());
        assert_eq!(w.bytes, buf.len() as u64, "bytes_written counts the whole file");
        buf
    }

    /// Reads the file back with the crate's own record reader: every value as written, in a
    /// table of one chunk and in one of three (the last one partial).
    #[test]
    fn values_read_back() {
        for n in [10, 2 * CHUNK_ROWS + 7] {
            values_read_back_at(n);
        }
    }

    fn values_read_back_at(n: usize) {
        let table = sample(n);
        let reader = SerializedFileReader::new(bytes::Bytes::from(write(&table))).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.file_metadata().num_rows(), n as i64);
        let schema = meta.file_metadata().schema_descr();
        assert_eq!(schema.num_columns(), 5);
        for (i, (name, _)) in table.columns.iter().enumerate() {
            assert_eq!(schema.column(i).name(), name);
            assert!(schema.column(i).self_type().is_optional(), "{name} is nullable");
        }
        let rows: Vec<_> = reader.get_row_iter(None).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), n);
        for (i, row) in rows.iter().enumerate() {
            let fields: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
            match fields[0] {
                Field::Double(x) if i % 4 == 3 => assert!(x.is_nan()),
                Field::Double(x) => assert_eq!(*x, i as f64 * 0.5),
                f => panic!("time_s read as {f:?}"),
            }
            assert_eq!(fields[1], &Field::Long(i as i64 - 3));
            assert_eq!(fields[2], &Field::ULong(u64::MAX - i as u64));
            assert_eq!(fields[3], &Field::Bool(i % 2 == 0));
            assert_eq!(fields[4], &Field::Str(["down", "up", "dé"][i % 3].to_string()));
        }
    }

    /// A failing sink's error comes back as the I/O error it is (an OSError in Python).
    #[test]
    fn io_errors_pass_through() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from_raw_os_error(28)) // ENOSPC
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = write_table(&sample(3), Full).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28), "{err}");
    }

    #[test]
    fn empty_table_has_schema_and_no_rows() {
        let table = sample(0);
        let reader = SerializedFileReader::new(bytes::Bytes::from(write(&table))).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
        assert_eq!(reader.metadata().file_metadata().schema_descr().num_columns(), 5);
    }

    #[test]
    fn refuses_a_table_without_columns_and_bad_codes() {
        assert!(write_table(&Table::new("none"), Vec::new()).is_err());
        let bad = StrColumn { dictionary: vec!["a".into()], codes: vec![0, 1] };
        let table = Table::new("t").with("s", Column::Str(bad));
        let err = write_table(&table, Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("outside the dictionary"), "{err}");
    }

    /// Writing in chunks gives the bytes of one `write_batch` call per column.
    #[test]
    fn chunks_write_the_same_file() {
        let table = sample(2 * CHUNK_ROWS + 7);
        let whole = |chunk_rows| {
            let mut buf = Vec::new();
            encode(&table, &mut buf, chunk_rows).unwrap();
            buf
        };
        assert_eq!(whole(CHUNK_ROWS), whole(table.rows()));
    }

    /// Identical tables give identical bytes (the store's digests are reproducible).
    #[test]
    fn deterministic() {
        assert_eq!(write(&sample(1000)), write(&sample(1000)));
    }
}
