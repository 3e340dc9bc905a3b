#!/usr/bin/env python3
"""Markdown tables of the criterion benchmarks: median time, and ratio to the group's `f64`.

Usage (from the workspace root, after `cargo bench -p benches`):

    python3 benches/table.py                      # reads target/criterion
    python3 benches/table.py path/to/criterion    # another criterion output folder
    python3 benches/table.py --filter rosenbrock  # only groups whose name contains the word

For every benchmark it reads `<criterion>/<group>/<id>/new/estimates.json` (the median's point
estimate, in nanoseconds) and `benchmark.json` beside it (the group and id as written in the
bench, before criterion made them file-safe). It prints one table per group, the ids in the
order of the bench files, and each median divided by the group's `f64` entry, the plain
function: "how many plain evaluations does this derivative cost".

Criterion keeps the results of earlier runs: an id that the last run skipped still shows its
old time. Remove `target/criterion` before a run for a table of that run alone.
"""

import argparse
import json
import re
import sys
from pathlib import Path

# Ids in the order the bench files define them; unknown ids follow, sorted.
ORDER = [
    "f64",
    "analytic",
    "reverse_gradient",
    "reverse_record",
    "reverse_sweep",
    "forward_gradient",
    "forward_jvp",
    "forward",
    "reverse",
    "auto",
    "num_dual_gradient_static",
    "num_dual_gradient_dyn",
    "num_dual_jacobian_static",
    "num_dual_jacobian_dyn",
    "ad_trait_reverse",
    "ad_trait_forward",
    "ad_trait_forward_multi8",
    "echidna_reverse",
    "echidna_bytecode",
]


def natural_key(text):
    """Sorts "n=10" before "n=100" before "n=1000"."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def id_key(bench_id):
    return (ORDER.index(bench_id), "") if bench_id in ORDER else (len(ORDER), bench_id)


def human(ns):
    """A time in nanoseconds with a readable unit and 3-4 significant digits."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}" if ns / scale < 100 else f"{ns / scale:.0f} {unit}"
    return f"{ns:.3g} ns" if ns < 100 else f"{ns:.0f} ns"


def load(root):
    """{group: {id: median ns}} for every benchmark under `root`."""
    groups = {}
    for estimates in sorted(root.glob("**/new/estimates.json")):
        new = estimates.parent
        meta_file = new / "benchmark.json"
        if not meta_file.exists():
            continue
        meta = json.loads(meta_file.read_text())
        bench_id = meta["function_id"] or meta.get("value_str") or "?"
        if meta.get("function_id") and meta.get("value_str"):
            bench_id = f"{meta['function_id']}/{meta['value_str']}"
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        groups.setdefault(meta["group_id"], {})[bench_id] = median
    return groups


def table(group, results):
    lines = [f"### {group}", "", "| id | median | ratio to f64 |", "|---|---:|---:|"]
    base = results.get("f64")
    for bench_id in sorted(results, key=id_key):
        ns = results[bench_id]
        ratio = f"{ns / base:.3g}×" if base else "–"
        lines.append(f"| `{bench_id}` | {human(ns)} | {ratio} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parent.parent / "target" / "criterion"
    parser.add_argument("root", nargs="?", type=Path, default=default, help="criterion folder")
    parser.add_argument("--filter", default="", help="only groups whose name contains this")
    args = parser.parse_args()

    if not args.root.is_dir():
        sys.exit(f"{args.root}: no criterion results; run `cargo bench -p benches` first")
    groups = load(args.root)
    names = [g for g in sorted(groups, key=natural_key) if args.filter in g]
    if not names:
        sys.exit(f"{args.root}: no benchmark groups found")
    print("\n\n".join(table(g, groups[g]) for g in names))


if __name__ == "__main__":
    main()
