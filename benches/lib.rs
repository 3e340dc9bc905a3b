//! Workloads shared by the benchmarks (and checked by tests before they are timed).
