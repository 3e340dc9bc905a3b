//! Teaching tools for a recorded tape: traces of the forward and reverse sweeps, and graph
//! export (filled in by the teaching-tools work).
