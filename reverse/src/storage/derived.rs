//! Forms that the layers above derive from a finished program to run it again faster: the
//! replay's prepared program, the machine code of a compiled recording. Storage keeps them
//! without knowing their types, and the program drops them when it grows (they describe the
//! nodes it had).

use core::any::Any;
use core::fmt;

/// A form derived from a program, kept beside it.
pub(crate) trait Derived: Any + Send + Sync {
    /// Bytes held (capacities), for the cap on kept memory.
    fn capacity_bytes(&self) -> usize;
    /// Forgets the form when its recording is reset for reuse: its buffers may go to the
    /// thread's kept ones with the recording's. (Dropped instead, with a recording that is
    /// freed, the form frees them.)
    fn recycle(self: Box<Self>) {}
    /// Itself, to be told apart from the other forms by type.
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// The derived forms of one program, at most one of each type.
#[derive(Default)]
pub(crate) struct Forms(Vec<Box<dyn Derived>>);

impl Forms {
    /// The form of type `X`, if one is kept.
    pub fn get<X: Derived>(&self) -> Option<&X> {
        self.0.iter().find_map(|f| f.as_any().downcast_ref::<X>())
    }

    /// Takes the form of type `X` out, if one is kept.
    pub fn take<X: Derived>(&mut self) -> Option<X> {
        let k = self.0.iter().position(|f| f.as_any().is::<X>())?;
        self.0
            .swap_remove(k)
            .into_any()
            .downcast::<X>()
            .ok()
            .map(|x| *x)
    }

    /// Keeps `x`, in place of a form of its type kept before.
    pub fn put<X: Derived>(&mut self, x: X) {
        self.take::<X>();
        self.0.push(Box::new(x));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Forgets every form, recycling it (see [`Derived::recycle`]).
    pub fn recycle(&mut self) {
        for f in self.0.drain(..) {
            f.recycle();
        }
    }

    pub fn capacity_bytes(&self) -> usize {
        self.0.iter().map(|f| f.capacity_bytes()).sum()
    }
}

impl fmt::Debug for Forms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Forms({})", self.0.len())
    }
}

/// `Derived`'s two conversions, the same for every form.
macro_rules! derived_any {
    () => {
        fn as_any(&self) -> &dyn core::any::Any {
            self
        }
        fn into_any(self: Box<Self>) -> Box<dyn core::any::Any> {
            self
        }
    };
}
pub(crate) use derived_any;
