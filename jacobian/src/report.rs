//! The cost report of a Jacobian (filled in by the teaching-tools work).
