#!/usr/bin/env bash
# Times this checkout's reverse gradient against an earlier commit's, in one criterion run (so
# that the ratio is not a comparison of two runs on a shared, noisy machine).
#
# Usage (from anywhere in the repository):   benches/against/run.sh [commit]   (default 2671fcb,
# the last commit of the first-generation tape)
#
# It checks the commit out in a temporary worktree, builds a throw-away crate that depends on both
# versions of `reverse` and `shared-ops` (the old ones renamed to version 0.0.1, so that the two
# can share a lockfile), and runs `benches/against/cmp.rs`: Rosenbrock's gradient by
# `reverse::gradient`, old and new, and the plain f64 function, for n = 100, 1000, 10 000.
set -euo pipefail
rev="${1:-2671fcb}"
root="$(git rev-parse --show-toplevel)"
work="$(mktemp -d)"
trap 'git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$root" worktree add --detach "$work/old" "$rev" >/dev/null
for c in shared-ops reverse forward; do
    sed -i 's/^version.workspace = true/version = "0.0.1"/' "$work/old/$c/Cargo.toml"
done

mkdir -p "$work/harness/benches" "$work/harness/src"
touch "$work/harness/src/lib.rs"
cp "$root/benches/against/cmp.rs" "$work/harness/benches/cmp.rs"
cat > "$work/harness/Cargo.toml" <<TOML
[package]
name = "against"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
reverse_old = { package = "reverse", path = "$work/old/reverse" }
ops_old = { package = "shared-ops", path = "$work/old/shared-ops" }
reverse = { path = "$root/reverse" }
shared-ops = { path = "$root/shared-ops" }
criterion = { version = "0.8.2", default-features = false, features = ["cargo_bench_support"] }

[[bench]]
name = "cmp"
harness = false

[profile.release]
codegen-units = 1
[profile.bench]
debug = false
TOML

CARGO_TARGET_DIR="$root/target/against" cargo bench --manifest-path "$work/harness/Cargo.toml" \
    --bench cmp -- --warm-up-time 1 --measurement-time 3
