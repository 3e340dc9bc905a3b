#!/usr/bin/env python3
"""Writes benches/RESULTS.md, and the headline block of README.md, from one criterion run.

    benches/results.py                 # run the benches below (with the peer crates), then write
    benches/results.py --no-run        # write from the estimates criterion left in target/
    benches/results.py --benches rosenbrock,hessian   # a subset

The page names the machine, the commit, the date and the command, and lists every benchmark
of the run: the median time, and the time over the group's `f64` (the plain function) where
the group has one. Re-running the script replaces the page; no other file carries measured
figures.
"""

import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCHES = ["rosenbrock", "dense", "hessian", "gradbench", "sparse", "taylor", "dot", "mlp"]
RUN_ARGS = ["--warm-up-time", "1", "--measurement-time", "3", "--noplot"]

# (group, ours, peer or None, what the line says). A peer's None compares with f64.
HEADLINES = [
    ("rosenbrock_n=100", "reverse_gradient", "echidna_reverse",
     "Rosenbrock gradient, n = 100, reverse mode, against echidna's tape"),
    ("dense_n=64_m=64", "forward", "num_dual_jacobian_dyn",
     "64×64 dense Jacobian, forward mode, against num-dual"),
    ("hessian_rosenbrock_n=100", "hvp", "echidna_hvp",
     "Hessian-vector product, Rosenbrock n = 100, against echidna"),
    ("sparse_hessian_rosenbrock_n=10000", "prepared", "echidna_prepared",
     "sparse Hessian, Rosenbrock n = 10 000, prepared, against echidna"),
    ("det_ell=9", "reverse_gradient", None,
     "GradBench det ℓ = 9: the gradient over the primal"),
]


def sh(*cmd):
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout.strip()


def machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    cores = os.cpu_count()
    rustc = sh("rustc", "--version")
    return f"{model or platform.processor()}, {cores} cores, {mem}, {platform.system()}; {rustc}"


def target_dir():
    meta = json.loads(sh("cargo", "metadata", "--format-version", "1", "--no-deps"))
    return pathlib.Path(meta["target_directory"])


def run(benches):
    crit = target_dir() / "criterion"
    if crit.exists():
        subprocess.run(["rm", "-rf", str(crit)], check=True)
    for b in benches:
        cmd = ["cargo", "bench", "-p", "benches", "--features", "peers", "--bench", b, "--"]
        print(" ".join(cmd + RUN_ARGS), file=sys.stderr)
        subprocess.run(cmd + RUN_ARGS, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def estimates():
    """{group: {function: median ns}} from criterion's files."""
    out = {}
    for bench in (target_dir() / "criterion").glob("**/new/benchmark.json"):
        meta = json.loads(bench.read_text())
        est = json.loads((bench.parent / "estimates.json").read_text())
        fn = meta.get("function_id") or ""
        if meta.get("value_str"):
            fn = f"{fn}/{meta['value_str']}" if fn else meta["value_str"]
        out.setdefault(meta["group_id"], {})[fn] = est["median"]["point_estimate"]
    return out


def fmt(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def page(groups, command):
    head = sh("git", "rev-parse", "--short=12", "HEAD")
    dirty = " (with uncommitted changes)" if sh("git", "status", "--porcelain", "--untracked-files=no") else ""
    lines = [
        "# Results",
        "",
        "Written by `benches/results.py` from one criterion run; re-run it to replace this page.",
        "Medians of criterion's samples. \"× f\" is the time over the group's `f64` benchmark (the",
        "plain function on `f64`), where the group has one. Benchmarks named after a peer crate",
        "(`num_dual_…`, `ad_trait_…`, `echidna_…`) run that crate's drivers on the same workload.",
        "",
        f"- machine: {machine()}",
        f"- commit: `{head}`{dirty}",
        f"- date: {datetime.date.today().isoformat()}",
        f"- command: `{command}`",
        "",
    ]
    lines += ab_section()
    for g in sorted(groups, key=natural):
        fns = groups[g]
        base = fns.get("f64")
        lines += [f"## {g}", "", "| benchmark | median | × f |", "|---|---:|---:|"]
        for fn in sorted(fns, key=lambda f: fns[f]):
            ratio = f"{fns[fn] / base:.1f}" if base else ""
            lines.append(f"| {fn} | {fmt(fns[fn])} | {ratio} |")
        lines.append("")
    return "\n".join(lines)


AB_BEGIN, AB_END = "<!-- ab:begin -->", "<!-- ab:end -->"
AB_DEFAULT = f"""{AB_BEGIN}
## A/B measurements

Figures that one run cannot give: two builds of the library timed in turn by `benches/ab.sh`
(the `unsafe` blocks' gains that `docs/unsafe.md` cites). The script keeps this section as it
finds it.

{AB_END}"""


def ab_section():
    """The A/B section of the current page, kept as it is."""
    old = ROOT / "benches" / "RESULTS.md"
    text = old.read_text() if old.exists() else ""
    m = re.search(re.escape(AB_BEGIN) + ".*?" + re.escape(AB_END), text, flags=re.S)
    return [m.group(0) if m else AB_DEFAULT, ""]


def headlines(groups):
    rows = ["| comparison | ours | other | ratio |", "|---|---:|---:|---:|"]
    for g, ours, other, what in HEADLINES:
        fns = groups.get(g, {})
        peer = other or "f64"
        if ours in fns and peer in fns:
            a, b = fns[ours], fns[peer]
            rows.append(f"| {what} | {fmt(a)} | {fmt(b)} ({peer}) | {b / a:.2f}× |"
                        if other else f"| {what} | {fmt(a)} | {fmt(b)} (f64) | {a / b:.1f}× f |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--benches", default=",".join(BENCHES))
    a = ap.parse_args()
    benches = [b for b in a.benches.split(",") if b]
    command = f"benches/results.py --benches {','.join(benches)}"
    if not a.no_run:
        run(benches)
    groups = estimates()
    if not groups:
        sys.exit("no criterion estimates under target/criterion: run without --no-run")
    (ROOT / "benches" / "RESULTS.md").write_text(page(groups, command) + "\n")
    readme = ROOT / "README.md"
    text = readme.read_text()
    block = f"<!-- results:begin -->\n{headlines(groups)}\n<!-- results:end -->"
    text = re.sub(r"<!-- results:begin -->.*?<!-- results:end -->", lambda _: block, text, flags=re.S)
    readme.write_text(text)
    print(f"wrote benches/RESULTS.md ({sum(len(v) for v in groups.values())} benchmarks)")


if __name__ == "__main__":
    main()
