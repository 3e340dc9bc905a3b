//! `ht`: ADBench's hand tracking. A hand model (bones in a tree, each with a base transform,
//! and vertices skinned to the bones by weights) is posed by 26 parameters `theta`: a global
//! rotation (axis-angle), a global translation and 20 finger joint angles. The residuals are
//! the observed points minus the posed hand, three per point: `objective` returns them,
//! `jacobian` their Jacobian, one row per residual.
//!
//! In the simple case (`us` empty or absent) point i corresponds to vertex
//! `correspondences[i]`, and the Jacobian has 26 columns, ∂/∂theta. In the complicated case it
//! corresponds to a point of triangle `correspondences[i]` at barycentric coordinates `us[i]`,
//! which are parameters too: each row has 28 columns, the derivatives with respect to the two
//! coordinates of the row's own point, then the 26 with respect to theta.
//!
//! The residuals are written once, over any [`Op`]. The Jacobian comes from a
//! [`PreparedSparseJacobian`] on one thread: preparation detects the sparsity pattern (global
//! detection falls back to local at the point, since the axis-angle rotation branches on its
//! norm), colours it and plans; each run repeats the compressed sweeps only. In the complicated
//! case the inputs are all the `us`, then theta: a point's two coordinates reach only its own
//! three rows, so all the `us` columns fit in two colours and the sweeps carry at most 28
//! lanes, whatever the number of points. In the simple case there are only the 26 theta
//! columns; the plan chooses between dense forward sweeps and compressed ones (a finger's
//! angles reach only the points its bones move, so columns of different fingers may share a
//! colour).
//!
//! ADBench's theta layout names finger bones 2 to 20 (its model has 22 bones); a model with
//! fewer bones ignores the angles of the bones it lacks.

use super::Primal;
use super::pose::{Matrix4, euler, joint_angles, posed, product, rodrigues};
use crate::{Run, json};
use serde_json::Value;
use wengert::sparse::{PreparedSparseJacobian, SparseJacobian, SparseOptions};
use wengert::{Function, Op};

/// The functions of `ht`.
const FUNCTIONS: [&str; 2] = ["objective", "jacobian"];

/// The pose parameters: 3 of global rotation, 3 of translation, 20 finger angles.
pub const THETA: usize = 26;

/// Prepares a function of `ht`: the residuals on `f64`, or their Jacobian by prepared sparse
/// sweeps.
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    if !FUNCTIONS.contains(&function) {
        return Err(crate::run::unknown("ht", function, &FUNCTIONS));
    }
    let (hand, x) = Hand::read(input)?;
    match function {
        "objective" => Ok(Primal::boxed(hand, x, json::array)),
        _ => HandJacobian::boxed(hand, x),
    }
}

/// A vertex the residuals read: its homogeneous base position, and the bones that move it with
/// their (nonzero) weights, in bone order.
#[derive(Clone, Debug)]
struct Vertex {
    position: [f64; 4],
    weights: Vec<(usize, f64)>,
}

/// The residuals as a function of the parameters (theta in the simple case; all the `us`, two
/// per point, then theta in the complicated one), holding the model and the observations.
#[derive(Clone, Debug)]
pub struct Hand {
    /// Each bone's parent (`None` for a root); a parent comes before its children.
    parents: Vec<Option<usize>>,
    /// Each bone's transform relative to its parent at rest.
    base_relatives: Vec<Matrix4>,
    /// The inverse of each bone's absolute transform at rest.
    inverse_base_absolutes: Vec<Matrix4>,
    /// The vertices the residuals read (not the whole model's).
    vertices: Vec<Vertex>,
    /// Whether the model is mirrored (its x coordinates negated).
    mirrored: bool,
    /// The observed points.
    points: Vec<[f64; 3]>,
    /// For each point, the indices in `vertices` of its triangle's corners (complicated), or
    /// its vertex three times (simple).
    corners: Vec<[usize; 3]>,
    /// Whether points lie on triangles at barycentric coordinates that are parameters.
    complicated: bool,
}

impl Hand {
    /// The residuals and the parameters of an input, its sizes and indices checked.
    pub fn read(input: &Value) -> Result<(Hand, Vec<f64>), String> {
        let top = Object {
            value: input,
            path: String::new(),
        };
        let theta = top.numbers("theta")?;
        if theta.len() != THETA {
            return Err(format!(
                "`theta` has {} entries, expected {THETA} (3 of global rotation, 3 of \
                 translation, 20 finger angles)",
                theta.len()
            ));
        }
        let data = top.object("data")?;
        let model = data.object("model")?;
        let parents = read_parents(&model)?;
        let bones = parents.len();
        if let Some(names) = model.value.get("bone_names") {
            let found = names.as_array().map(Vec::len);
            if found != Some(bones) {
                return Err(format!(
                    "`data.model.bone_names` must be an array of {bones} names (one per bone \
                     of `data.model.parents`), got {}",
                    found.map_or("no array".into(), |n| format!("{n} entries"))
                ));
            }
        }
        let base_relatives = model.matrices("base_relatives", bones)?;
        let inverse_base_absolutes = model.matrices("inverse_base_absolutes", bones)?;
        let (count, positions) = model.rows("base_positions", 4)?;
        let (rows, weights) = model.rows("weights", bones)?;
        if rows != count {
            return Err(format!(
                "`data.model.weights` has {rows} rows, expected {count} (one per vertex of \
                 `data.model.base_positions`)"
            ));
        }
        let (_, triangles) = model.index_rows("triangles", 3, count, "vertex")?;
        let mirrored = match model.value.get("is_mirrored") {
            None => false,
            Some(v) => v
                .as_bool()
                .ok_or_else(|| format!("`data.model.is_mirrored` must be a boolean, got {v}"))?,
        };
        let (p, points) = data.rows("points", 3)?;
        let us = match input.get("us") {
            None => Vec::new(),
            Some(_) => top.rows("us", 2)?.1,
        };
        let complicated = !us.is_empty();
        if complicated && us.len() != 2 * p {
            return Err(format!(
                "`us` has {} rows, expected {p} (one per point of `data.points`) or none",
                us.len() / 2
            ));
        }
        let (limit, what) = if complicated {
            (triangles.len(), "triangle")
        } else {
            (count, "vertex")
        };
        let (found, correspondences) = data.index_rows("correspondences", 0, limit, what)?;
        if found != p {
            return Err(format!(
                "`data.correspondences` has {found} entries, expected {p} (one per point of \
                 `data.points`)"
            ));
        }
        // The vertices the residuals read, each once, in the order first read.
        let mut slot = vec![None; count];
        let mut vertices = Vec::new();
        let mut corners = Vec::with_capacity(p);
        for &c in &correspondences {
            let corner = if complicated { triangles[c[0]] } else { c };
            corners.push(corner.map(|v| {
                *slot[v].get_or_insert_with(|| {
                    let w = &weights[v * bones..(v + 1) * bones];
                    vertices.push(Vertex {
                        position: std::array::from_fn(|k| positions[4 * v + k]),
                        weights: (0..bones)
                            .filter(|&b| w[b] != 0.0)
                            .map(|b| (b, w[b]))
                            .collect(),
                    });
                    vertices.len() - 1
                })
            }));
        }
        let hand = Hand {
            parents,
            base_relatives,
            inverse_base_absolutes,
            vertices,
            mirrored,
            points: points.chunks(3).map(|q| [q[0], q[1], q[2]]).collect(),
            corners,
            complicated,
        };
        let mut x = us;
        x.extend(theta);
        Ok((hand, x))
    }

    /// The number of observed points.
    pub fn points(&self) -> usize {
        self.points.len()
    }

    /// Whether points lie on triangles at barycentric coordinates that are parameters.
    pub fn is_complicated(&self) -> bool {
        self.complicated
    }

    /// The positions of `vertices` in the pose `theta`: skinned, then moved by the global
    /// rotation and translation.
    fn pose<T: Op>(&self, theta: &[T]) -> Vec<[T; 3]> {
        let bones = self.parents.len();
        let angles = joint_angles(theta, bones);
        let mut absolutes: Vec<[[T; 4]; 4]> = Vec::with_capacity(bones);
        // The first three rows of each bone's transform: rest pose to posed.
        let mut transforms: Vec<[[T; 4]; 3]> = Vec::with_capacity(bones);
        for (b, angles) in angles.into_iter().enumerate() {
            let relative = posed(&self.base_relatives[b], &euler(angles));
            let absolute = match self.parents[b] {
                None => relative,
                Some(parent) => product(&absolutes[parent], &relative),
            };
            let inverse = &self.inverse_base_absolutes[b];
            transforms.push(std::array::from_fn(|i| {
                std::array::from_fn(|j| (0..4).map(|k| absolute[i][k] * inverse[k][j]).sum())
            }));
            absolutes.push(absolute);
        }
        let rotation = rodrigues([theta[0], theta[1], theta[2]]);
        self.vertices
            .iter()
            .map(|v| {
                let mut skinned = [T::zero(); 3];
                for &(b, w) in &v.weights {
                    for (i, s) in skinned.iter_mut().enumerate() {
                        let t = &transforms[b][i];
                        let moved: T = (0..4).map(|k| t[k] * v.position[k]).sum();
                        *s += moved * w;
                    }
                }
                if self.mirrored {
                    skinned[0] = -skinned[0];
                }
                std::array::from_fn(|i| {
                    let r = &rotation[i];
                    r[0] * skinned[0] + r[1] * skinned[1] + r[2] * skinned[2] + theta[3 + i]
                })
            })
            .collect()
    }
}

impl Function for Hand {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let (us, theta) = x.split_at(if self.complicated {
            2 * self.points()
        } else {
            0
        });
        let positions = self.pose(theta);
        let mut residuals = Vec::with_capacity(3 * self.points());
        for (i, (point, c)) in self.points.iter().zip(&self.corners).enumerate() {
            for (j, &observed) in point.iter().enumerate() {
                let on_hand = if self.complicated {
                    let (u0, u1) = (us[2 * i], us[2 * i + 1]);
                    u0 * positions[c[0]][j]
                        + u1 * positions[c[1]][j]
                        + (T::one() - u0 - u1) * positions[c[2]][j]
                } else {
                    positions[c[0]][j]
                };
                residuals.push(T::constant(observed) - on_hand);
            }
        }
        residuals
    }

    fn sizes(&self) -> Option<(usize, usize)> {
        let us = if self.complicated { 2 } else { 0 };
        Some((us * self.points() + THETA, 3 * self.points()))
    }
}

/// The Jacobian of the residuals by a prepared sparse Jacobian, written out as GradBench wants
/// it: row by row, the `us` columns of the row's own point first in the complicated case.
struct HandJacobian {
    prepared: PreparedSparseJacobian<Hand>,
    jacobian: SparseJacobian,
    x: Vec<f64>,
    /// The inputs before theta: `2P` in the complicated case, else none.
    us: usize,
    /// The columns of the output: 28 in the complicated case, 26 in the simple one.
    columns: usize,
    /// The output, row by row.
    out: Vec<f64>,
}

impl HandJacobian {
    /// Detects, colours and plans at `x`, on one thread.
    fn boxed(hand: Hand, x: Vec<f64>) -> Result<Box<dyn Run>, String> {
        let rows = 3 * hand.points();
        let us = if hand.complicated {
            2 * hand.points()
        } else {
            0
        };
        let columns = THETA + if hand.complicated { 2 } else { 0 };
        let options = SparseOptions {
            threads: false,
            ..SparseOptions::default()
        };
        let prepared =
            PreparedSparseJacobian::with_options(hand, &x, options).map_err(|e| e.to_string())?;
        let jacobian = prepared.output();
        Ok(Box::new(HandJacobian {
            prepared,
            jacobian,
            x,
            us,
            columns,
            out: vec![0.0; rows * columns],
        }))
    }
}

impl Run for HandJacobian {
    fn run(&mut self) -> Result<(), String> {
        (self.prepared)
            .jacobian_into(&self.x, &mut self.jacobian)
            .map_err(|e| e.to_string())?;
        let m = &self.jacobian.matrix;
        let (offsets, indices, values) = (m.row_offsets(), m.col_indices(), m.values());
        let first_theta = self.columns - THETA;
        self.out.fill(0.0);
        for (r, row) in self.out.chunks_mut(self.columns).enumerate() {
            for k in offsets[r]..offsets[r + 1] {
                let c = indices[k];
                if c >= self.us {
                    row[first_theta + c - self.us] = values[k];
                } else if c / 2 == r / 3 {
                    // A coordinate of this row's own point (those of others do not reach it).
                    row[c % 2] = values[k];
                }
            }
        }
        Ok(())
    }

    fn output(&self) -> Value {
        json::rows(&self.out, self.columns)
    }
}

/// `data.model.parents`: each −1 (a root) or an earlier bone.
fn read_parents(model: &Object) -> Result<Vec<Option<usize>>, String> {
    let parents = model.integers("parents")?;
    if parents.is_empty() {
        return Err("`data.model.parents` is empty: the model needs a bone".into());
    }
    let check = |(b, &p): (usize, &i64)| match p {
        -1 => Ok(None),
        p if (0..b as i64).contains(&p) => Ok(Some(p as usize)),
        p => Err(format!(
            "`data.model.parents[{b}]` is {p}, expected -1 (a root) or an earlier bone (below \
             {b})"
        )),
    };
    parents.iter().enumerate().map(check).collect()
}

/// An object of the input and its path, so that an error names a field in full
/// (`data.model.weights`).
struct Object<'a> {
    value: &'a Value,
    path: String,
}

impl<'a> Object<'a> {
    /// The path of `field`.
    fn name(&self, field: &str) -> String {
        if self.path.is_empty() {
            field.into()
        } else {
            format!("{}.{field}", self.path)
        }
    }

    fn field(&self, field: &str) -> Result<&'a Value, String> {
        self.value.get(field).ok_or_else(|| {
            if self.path.is_empty() {
                format!("the input has no field `{field}`")
            } else {
                format!("`{}` has no field `{field}`", self.path)
            }
        })
    }

    /// A field that is an object.
    fn object(&self, field: &str) -> Result<Object<'a>, String> {
        let value = self.field(field)?;
        let path = self.name(field);
        if value.is_object() {
            Ok(Object { value, path })
        } else {
            Err(format!("`{path}` must be an object, got {value}"))
        }
    }

    /// An array of numbers.
    fn numbers(&self, field: &str) -> Result<Vec<f64>, String> {
        numbers(self.field(field)?, &self.name(field))
    }

    /// An array of integers.
    fn integers(&self, field: &str) -> Result<Vec<i64>, String> {
        integers(self.field(field)?, &self.name(field))
    }

    /// An array of rows of `width` numbers: `(rows, entries row by row)`.
    fn rows(&self, field: &str, width: usize) -> Result<(usize, Vec<f64>), String> {
        rows(self.field(field)?, &self.name(field), width)
    }

    /// Indices below `limit` of a `what`: an array of rows of three (`width` 3), or a flat
    /// array (`width` 0, each index then stands for three equal ones).
    fn index_rows(
        &self,
        field: &str,
        width: usize,
        limit: usize,
        what: &str,
    ) -> Result<(usize, Vec<[usize; 3]>), String> {
        let label = self.name(field);
        let check = |label: &str, i: i64| {
            usize::try_from(i)
                .ok()
                .filter(|&i| i < limit)
                .ok_or_else(|| {
                    format!("`{label}` is {i}, expected the index of a {what} (below {limit})")
                })
        };
        let items = array(self.field(field)?, &label, "indices")?;
        let mut rows = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let label = format!("{label}[{i}]");
            if width == 0 {
                rows.push([check(&label, integer(item, &label)?)?; 3]);
                continue;
            }
            let row = array(item, &label, "integers")?;
            if row.len() != width {
                return Err(format!(
                    "`{label}` has {} entries, expected {width}",
                    row.len()
                ));
            }
            let mut corners = [0; 3];
            for (k, (index, corner)) in row.iter().zip(&mut corners).enumerate() {
                let label = format!("{label}[{k}]");
                *corner = check(&label, integer(index, &label)?)?;
            }
            rows.push(corners);
        }
        Ok((items.len(), rows))
    }

    /// `count` 4×4 matrices, each an array of 4 rows of 4 numbers.
    fn matrices(&self, field: &str, count: usize) -> Result<Vec<Matrix4>, String> {
        let label = self.name(field);
        let items = array(self.field(field)?, &label, "4×4 matrices")?;
        if items.len() != count {
            return Err(format!(
                "`{label}` has {} matrices, expected {count} (one per bone of \
                 `data.model.parents`)",
                items.len()
            ));
        }
        let mut matrices = Vec::with_capacity(count);
        for (b, item) in items.iter().enumerate() {
            let (rows, data) = rows(item, &format!("{label}[{b}]"), 4)?;
            if rows != 4 {
                return Err(format!(
                    "`{label}[{b}]` has {rows} rows, expected 4 (a 4×4 matrix)"
                ));
            }
            matrices.push(std::array::from_fn(|i| {
                std::array::from_fn(|j| data[4 * i + j])
            }));
        }
        Ok(matrices)
    }
}

/// `v` as an array, or an error saying what it should hold.
fn array<'v>(v: &'v Value, label: &str, what: &str) -> Result<&'v Vec<Value>, String> {
    v.as_array()
        .ok_or_else(|| format!("`{label}` must be an array of {what}, got {v}"))
}

fn numbers(v: &Value, label: &str) -> Result<Vec<f64>, String> {
    let items = array(v, label, "numbers")?;
    let number = |(i, x): (usize, &Value)| {
        x.as_f64()
            .ok_or_else(|| format!("`{label}[{i}]` must be a number, got {x}"))
    };
    items.iter().enumerate().map(number).collect()
}

/// An array of rows of `width` numbers: `(rows, entries row by row)`.
fn rows(v: &Value, label: &str, width: usize) -> Result<(usize, Vec<f64>), String> {
    let items = array(v, label, &format!("rows of {width} numbers"))?;
    let mut data = Vec::with_capacity(items.len() * width);
    for (i, row) in items.iter().enumerate() {
        let row = numbers(row, &format!("{label}[{i}]"))?;
        if row.len() != width {
            return Err(format!(
                "`{label}[{i}]` has {} entries, expected {width}",
                row.len()
            ));
        }
        data.extend(row);
    }
    Ok((items.len(), data))
}

/// An integer, also written as a floating-point number with no fractional part.
fn integer(x: &Value, label: &str) -> Result<i64, String> {
    x.as_i64()
        .or_else(|| {
            x.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                .map(|f| f as i64)
        })
        .ok_or_else(|| format!("`{label}` must be an integer, got {x}"))
}

/// An array of integers.
fn integers(v: &Value, label: &str) -> Result<Vec<i64>, String> {
    let items = array(v, label, "integers")?;
    let each = |(i, x): (usize, &Value)| integer(x, &format!("{label}[{i}]"));
    items.iter().enumerate().map(each).collect()
}
