#!/usr/bin/env python3
"""Writes benches/RESULTS.md, and the headline block of README.md, from one criterion run.

    benches/results.py                 # run the benches below (with the peer crates), then write
    benches/results.py --no-run        # write from the estimates criterion left in target/
    benches/results.py --benches rosenbrock,hessian   # a subset
    benches/results.py --no-gradbench  # without the GradBench tool's own timings

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


CHARTS = [("mode_asymmetry", "forward against reverse Jacobian time over n and m"),
          ("second_order", "the four mode pairs of a Hessian over n")]


def run(benches):
    crit = target_dir() / "criterion"
    if crit.exists():
        subprocess.run(["rm", "-rf", str(crit)], check=True)
    for example, _ in CHARTS:
        print(f"example {example} --results", file=sys.stderr)
        subprocess.run(["cargo", "run", "--release", "-q", "-p", "examples", "--example", example,
                        "--", "--results"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    plans = []
    for b in benches:
        cmd = ["cargo", "bench", "-p", "benches", "--features", "peers", "--bench", b, "--"]
        print(" ".join(cmd + RUN_ARGS), file=sys.stderr)
        res = subprocess.run(cmd + RUN_ARGS, cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        sys.stderr.write(res.stderr)
        plans += [l for l in res.stderr.splitlines() if l.startswith("plan ")]
    if plans:
        crit.mkdir(parents=True, exist_ok=True)
        (crit / "plans.txt").write_text("\n".join(plans) + "\n")


def compiled_section():
    """What each compiled gradient keeps and its code, from the `plan` lines the gradbench
    bench prints (saved by `run`), with the median of its `compile` benchmark."""
    saved = target_dir() / "criterion" / "plans.txt"
    if not saved.exists():
        return []
    groups = estimates()
    lines = ["## Compiled gradients: compile time, code and memory", "",
             "Per objective of the `gradbench` bench: the median of its `compile` benchmark",
             "(`Recording::compile_gradient` of a fresh recording), the machine code, and the bytes a",
             "`PreparedGradient` by `Preparation::Compile` keeps against the plain recording's.", "",
             "| group | compile | code | kept | recording | kept ÷ recording |",
             "|---|---:|---:|---:|---:|---:|"]
    for line in saved.read_text().splitlines():
        name, *pairs = line.split()[1:]
        v = {k: int(x) for k, x in (p.split("=") for p in pairs)}
        compile_ns = groups.get(name, {}).get("compile")
        mib = lambda b: f"{b / 2**20:.1f} MiB"
        lines.append(f"| {name} | {fmt(compile_ns) if compile_ns else ''} | "
                     f"{v['code_bytes'] / 1024:.1f} KiB | {mib(v['kept_bytes'])} | "
                     f"{mib(v['recording_bytes'])} | {v['kept_bytes'] / v['recording_bytes']:.2f} |")
    return lines + [""]


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


def page(groups, command, gradbench=None):
    head = sh("git", "rev-parse", "--short=12", "HEAD")
    # The files this script writes do not count as changes to what was measured.
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                            capture_output=True, text=True).stdout
    changed = [l[3:] for l in status.splitlines() if l.strip()]
    outputs = {"README.md", "benches/RESULTS.md"} | {f"benches/{n}.svg" for n, _ in CHARTS}
    dirty = " (with uncommitted changes)" if set(changed) - outputs else ""
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
    lines += ["## Charts", ""] + [f"- [{what}]({name}.svg) (`cargo run --release --example {name} -- --results`)"
                                  for name, what in CHARTS] + [""]
    lines += ab_section()
    if gradbench:
        lines += gradbench_section(gradbench)
    lines += compiled_section()
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


# GradBench objectives timed by the tool itself: (eval, primal, derivative, description, input).
def gradbench_inputs():
    import random
    rng = random.Random(31337)
    rand = lambda n: [rng.random() for _ in range(n)]
    normal = lambda n: [rng.gauss(0.0, 1.0) for _ in range(n)]
    rows = lambda v, c: [v[i:i + c] for i in range(0, len(v), c)]
    out = []
    for n in (1024, 16392):
        out.append(("llsq", "primal", "gradient", f"n={n},m=128", {"x": rand(128), "n": n}))
    out.append(("lse", "primal", "gradient", "n=640000", {"x": rand(640000)}))
    out.append(("det", "primal", "gradient", "ell=9", {"A": rand(81), "ell": 9}))
    out.append(("ode", "primal", "gradient", "n=1000,s=100", {"x": rand(1000), "s": 100}))
    pts = rows(rand(1000 * 8), 8)
    out.append(("kmeans", "cost", "dir", "k=100,n=1000,d=8", {"points": pts, "centroids": pts[-100:]}))
    for d, k in ((10, 10), (64, 100)):
        n = 1000
        out.append(("gmm", "objective", "jacobian", f"d={d},k={k},n={n}", {
            "d": d, "k": k, "n": n, "x": rows(normal(n * d), d), "m": 0, "gamma": 1.0,
            "alpha": normal(k), "mu": rows(rand(k * d), d), "q": rows(normal(k * d), d),
            "l": rows(normal(k * d * (d - 1) // 2), d * (d - 1) // 2) if d > 1 else [[] for _ in range(k)]}))
    l, b, c = 4, 14, 1024
    out.append(("lstm", "objective", "jacobian", f"l={l},c={c},b={b}", {
        "main_params": rows(rand(2 * l * 4 * b), 4 * b), "extra_params": rows(rand(3 * b), b),
        "state": rows(rand(2 * l * b), b), "sequence": rows(rand(c * b), b)}))
    out.append(("ba", "objective", "jacobian", "n=49,m=7776,p=31843", {
        "n": 49, "m": 7776, "p": 31843,
        "cam": [0.1, -0.2, 0.05, 0.3, 0.1, -5.0, 500.0, 0.02, -0.01, 1e-3, 1e-5],
        "x": [0.2, -0.1, 3.0], "w": 0.8, "feat": [1.5, -2.0]}))
    return out


def gradbench_ratios(min_seconds=1.0):
    """Rows (eval, workload, primal median, derivative median, ratio) from the tool's timings."""
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "wengert-gradbench"], cwd=ROOT, check=True)
    tool = target_dir() / "release" / "gradbench-tool"
    rows = []
    for ev, primal, deriv, desc, inp in gradbench_inputs():
        inp = dict(inp, min_runs=5, min_seconds=min_seconds)
        lines = [json.dumps({"id": 0, "kind": "define", "module": ev})]
        for i, fn in enumerate((primal, deriv)):
            lines.append(json.dumps({"id": i + 1, "kind": "evaluate", "module": ev, "function": fn,
                                     "input": inp, "description": desc}))
        print(f"gradbench {ev} {desc}", file=sys.stderr)
        res = subprocess.run([str(tool)], input="\n".join(lines) + "\n", capture_output=True,
                             text=True, check=True)
        resp = [json.loads(l) for l in res.stdout.splitlines()]
        med = []
        for r in resp[1:]:
            if not r.get("success"):
                sys.exit(f"{ev} {desc}: {r.get('error')}")
            t = sorted(x["nanoseconds"] for x in r["timings"] if x["name"] == "evaluate")
            med.append(t[len(t) // 2])
        rows.append((ev, desc, med[0], med[1], med[1] / med[0]))
    return rows


def gradbench_section(rows):
    lines = ["## GradBench objectives, timed by the tool", "",
             "`gradbench-tool` on inputs of GradBench's shapes (`benches/results.py` makes them),",
             "at least five runs and one second each; medians of its own `evaluate` timings.", "",
             "| eval | workload | primal | derivative | derivative ÷ primal |", "|---|---|---:|---:|---:|"]
    for ev, desc, p, d, r in rows:
        lines.append(f"| {ev} | {desc} | {fmt(p)} | {fmt(d)} | {r:.1f} |")
    return lines + [""]


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
    ap.add_argument("--no-gradbench", action="store_true", help="leave out the tool's timings")
    a = ap.parse_args()
    benches = [b for b in a.benches.split(",") if b]
    command = f"benches/results.py --benches {','.join(benches)}"
    if not a.no_run:
        run(benches)
    groups = estimates()
    if not groups:
        sys.exit("no criterion estimates under target/criterion: run without --no-run")
    tool = None if a.no_gradbench else gradbench_ratios()
    (ROOT / "benches" / "RESULTS.md").write_text(page(groups, command, tool) + "\n")
    readme = ROOT / "README.md"
    text = readme.read_text()
    block = f"<!-- results:begin -->\n{headlines(groups)}\n<!-- results:end -->"
    text = re.sub(r"<!-- results:begin -->.*?<!-- results:end -->", lambda _: block, text, flags=re.S)
    readme.write_text(text)
    print(f"wrote benches/RESULTS.md ({sum(len(v) for v in groups.values())} benchmarks)")


if __name__ == "__main__":
    main()
