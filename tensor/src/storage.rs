//! A tensor's data: a shape and its elements in row-major order, compact.
//!
//! An `ArrayD` is 112 bytes (a vector, a pointer, a shape and strides) and allocates for its
//! elements even when there is one. A tensor's data is always row-major, so its strides follow
//! from its shape, and one element fits where the vector's pointer would be: 64 bytes, and a
//! one-element tensor allocates nothing beyond its node. Views ([`Storage::view`]) are what
//! the ops compute with.

use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, Dimension, IxDyn};

use crate::{Element, pool};

/// Elements in row-major order: one inline, or a vector (of any other length).
#[derive(Clone)]
pub(crate) enum Buf<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Copy> Buf<T> {
    pub(crate) fn from_vec(v: Vec<T>) -> Buf<T> {
        match *v {
            [x] => Buf::One(x),
            _ => Buf::Many(v),
        }
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            Buf::One(x) => std::slice::from_ref(x),
            Buf::Many(v) => v,
        }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Buf::One(x) => std::slice::from_mut(x),
            Buf::Many(v) => v,
        }
    }
}

impl<T: Element> Buf<T> {
    /// `n` elements with unspecified values, for a kernel that writes every one: a kept
    /// buffer when there is one ([`pool`]).
    pub(crate) fn scratch(n: usize) -> Buf<T> {
        if n == 1 {
            Buf::One(T::zero())
        } else {
            Buf::Many(pool::take(n))
        }
    }

    /// Hands the elements to the [`pool`], leaving none.
    pub(crate) fn recycle(&mut self) {
        if let Buf::Many(v) = self {
            pool::give(std::mem::take(v));
        }
    }
}

/// A row-major array: its shape and `shape.iter().product()` elements.
#[derive(Clone)]
pub(crate) struct Storage<T> {
    shape: IxDyn,
    buf: Buf<T>,
}

impl<T: Copy> Storage<T> {
    /// An array of `shape` from its elements in row-major order.
    pub(crate) fn new(shape: IxDyn, buf: Buf<T>) -> Storage<T> {
        debug_assert_eq!(shape.size(), buf.as_slice().len(), "one element per index");
        Storage { shape, buf }
    }

    /// The array's elements in row-major order: its vector when it has that layout (no copy),
    /// else a copy.
    pub(crate) fn from_array(a: ArrayD<T>) -> Storage<T> {
        let shape = a.raw_dim();
        let len = a.len();
        let buf = if a.is_standard_layout() {
            match a.into_raw_vec_and_offset() {
                (v, Some(0) | None) if v.len() == len => Buf::from_vec(v),
                (v, Some(off)) => Buf::from_vec(v[off..off + len].to_vec()),
                (_, None) => Buf::Many(Vec::new()),
            }
        } else {
            Buf::from_vec(a.iter().copied().collect())
        };
        Storage::new(shape, buf)
    }

    pub(crate) fn shape(&self) -> &[usize] {
        self.shape.slice()
    }

    pub(crate) fn raw_dim(&self) -> IxDyn {
        self.shape.clone()
    }

    pub(crate) fn len(&self) -> usize {
        self.buf.as_slice().len()
    }

    /// The elements in row-major order.
    pub(crate) fn as_slice(&self) -> &[T] {
        self.buf.as_slice()
    }

    pub(crate) fn view(&self) -> ArrayViewD<'_, T> {
        ArrayViewD::from_shape(self.shape.clone(), self.buf.as_slice())
            .expect("one element per index")
    }

    pub(crate) fn view_mut(&mut self) -> ArrayViewMutD<'_, T> {
        ArrayViewMutD::from_shape(self.shape.clone(), self.buf.as_mut_slice())
            .expect("one element per index")
    }

    /// Hands the elements to the [`pool`]: for a storage about to be dropped.
    pub(crate) fn recycle(&mut self)
    where
        T: Element,
    {
        self.buf.recycle();
    }

    pub(crate) fn to_array(&self) -> ArrayD<T> {
        ArrayD::from_shape_vec(self.shape.clone(), self.buf.as_slice().to_vec())
            .expect("one element per index")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, Axis, s};

    /// Every layout an op may hand over becomes the same row-major elements.
    #[test]
    fn any_layout_becomes_row_major() {
        let a = Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as f64).into_dyn();
        let row_major: Vec<f64> = a.iter().copied().collect();
        let transposed = a.t().to_owned(); // column-major owner
        let mut sliced = a.clone();
        sliced.slice_collapse(s![1.., ..]); // a standard layout at an offset
        let mut squeezed = a.clone();
        squeezed.collapse_axis(Axis(0), 2); // one row, at an offset
        for (array, want) in [
            (a.clone(), row_major.clone()),
            (transposed.clone(), transposed.iter().copied().collect()),
            (sliced.clone(), row_major[4..].to_vec()),
            (squeezed.clone(), row_major[8..].to_vec()),
        ] {
            let shape = array.shape().to_vec();
            let s = Storage::from_array(array.clone());
            assert_eq!(s.shape(), &shape[..]);
            assert_eq!(s.as_slice(), &want[..]);
            assert_eq!(s.view(), array.view());
            assert_eq!(s.to_array(), array);
        }
        let one = Storage::from_array(ndarray::arr0(2.5).into_dyn());
        assert!(matches!(one.buf, Buf::One(2.5)));
        assert_eq!(one.view()[[]], 2.5);
        let empty = Storage::from_array(ArrayD::<f64>::zeros(IxDyn(&[0, 3])));
        assert_eq!((empty.len(), empty.shape()), (0, &[0, 3][..]));
    }
}
