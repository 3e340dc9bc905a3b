//! Reading an eval's input and writing its output: every error names the field and what was
//! wrong with it (a missing field, a wrong type, a ragged matrix, the sizes).

use serde_json::Value;

fn field<'a>(input: &'a Value, name: &str) -> Result<&'a Value, String> {
    input
        .get(name)
        .ok_or_else(|| format!("the input has no field `{name}`"))
}

/// A number.
pub fn number(input: &Value, name: &str) -> Result<f64, String> {
    let v = field(input, name)?;
    v.as_f64()
        .ok_or_else(|| format!("`{name}` must be a number, got {v}"))
}

/// A count (a non-negative integer).
pub fn count(input: &Value, name: &str) -> Result<usize, String> {
    let v = field(input, name)?;
    v.as_u64()
        .map(|c| c as usize)
        .ok_or_else(|| format!("`{name}` must be a non-negative integer, got {v}"))
}

fn floats(v: &Value, what: &str) -> Result<Vec<f64>, String> {
    let items = v
        .as_array()
        .ok_or_else(|| format!("{what} must be an array of numbers"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_f64()
                .ok_or_else(|| format!("{what}[{i}] must be a number, got {x}"))
        })
        .collect()
}

/// An array of numbers.
pub fn vector(input: &Value, name: &str) -> Result<Vec<f64>, String> {
    floats(field(input, name)?, &format!("`{name}`"))
}

/// An array of rows of equal length: `(rows, cols, entries row by row)`.
pub fn matrix(input: &Value, name: &str) -> Result<(usize, usize, Vec<f64>), String> {
    let rows = field(input, name)?
        .as_array()
        .ok_or_else(|| format!("`{name}` must be an array of rows"))?;
    let mut data = Vec::new();
    let mut cols = None;
    for (i, row) in rows.iter().enumerate() {
        let row = floats(row, &format!("`{name}`[{i}]"))?;
        match cols {
            None => cols = Some(row.len()),
            Some(c) if c != row.len() => {
                return Err(format!(
                    "`{name}` is ragged: row 0 has {c} entries, row {i} has {}",
                    row.len()
                ));
            }
            Some(_) => {}
        }
        data.extend(row);
    }
    Ok((rows.len(), cols.unwrap_or(0), data))
}

/// Checks that `name` has `want` entries.
pub fn expect_len(name: &str, found: usize, want: usize) -> Result<(), String> {
    if found == want {
        Ok(())
    } else {
        Err(format!("`{name}` has {found} entries, expected {want}"))
    }
}

/// `v` as a JSON array.
pub fn array(v: &[f64]) -> Value {
    Value::from(v.to_vec())
}

/// `data` (row by row) as an array of `rows` rows.
pub fn rows(data: &[f64], cols: usize) -> Value {
    Value::Array(data.chunks(cols.max(1)).map(array).collect())
}
