"""Whole-process benchmarks of kubectl-safety against their floors, side by side in one run.

    python benchmarks/run.py                       # start-up + snapshots 100 and 1000 nodes
    python benchmarks/run.py --sizes 100,1000,5000 --runs 3
    python benchmarks/run.py --only startup --runs 10
    python benchmarks/run.py --only snapshot --sizes 1000 --runs 1 --before /path/to/old/checkout
    python benchmarks/run.py --only check --sizes 1000,5000   # check vs one capacity-aware drain

Snapshot floors: ``json.load`` with the GC off (budgets are ratios to it), ``json.load`` with the GC
on and ``orjson.loads`` as references. ``--before DIR`` also runs each command from another checkout
(PYTHONPATH=DIR) in the same rounds, for before/after figures.

Every measurement is a fresh process (``os.wait4`` gives its own peak RSS and CPU time). Runs are
interleaved round by round (floor, then each command) so that load on a shared machine hits the
floor and the commands alike. Prints a table of medians, spread and ratios to the floor, and
writes it all to ``benchmarks/results/latest.json``. Snapshots come from ``generate.py`` (run on
demand if missing). Commands that do not exist yet are skipped with a note.
"""

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
RESULTS = os.path.join(HERE, "results", "latest.json")
PY = sys.executable
# The console script of this interpreter (not a pyenv/asdf shim, which adds its own start-up).
SCRIPT = os.path.join(sysconfig.get_path("scripts"), "kubectl-safety")
EXE = [SCRIPT] if os.path.exists(SCRIPT) else [PY, "-m", "kubectl_safety"]
# Budgets (issue 8): ratio of the command's median to its floor's median.
# Issue 16: snapshots against json.load with the GC off (the honest floor), plus absolute limits
# for the largest size (5,000 nodes: 15 s, 3 GB).
BUDGETS = {"startup": {"wall": 1.5}, "snapshot": {"wall": 0.3, "rss": 0.6},
           "large": {"nodes": 5000, "wallSeconds": 15.0, "rssMiB": 3 * 1024},
           "check": {"wall": 2.0}}  # issue 17: check within 2x one capacity-aware drain --dry-run


# Bytecode caching on, as for an installed package (a shell may set PYTHONDONTWRITEBYTECODE,
# which would make every run compile kubectl_safety from source); the cache lives outside the repo.
PYCACHE = os.path.join(tempfile.gettempdir(), "kubectl-safety-bench-pycache")
# PYTHONPATH: this checkout's package, whichever checkout the console script was installed from.
BASE_ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPYCACHEPREFIX": PYCACHE,
            "PYTHONPATH": ROOT}


def measure(argv, env=None):
    """One fresh process: wall seconds, CPU seconds (user+sys), peak RSS (MiB), exit code, stderr."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**BASE_ENV, **(env or {})})
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024,
            "exit": proc.returncode, "stderr": err.decode(errors="replace").strip()}


def summarize(samples):
    walls = [s["wall"] for s in samples]
    median = statistics.median(walls)
    return {"runs": len(samples), "wall": median, "wallMin": min(walls), "wallMax": max(walls),
            "spread": (max(walls) - min(walls)) / median if median else 0.0,
            "cpu": statistics.median(s["cpu"] for s in samples),
            "rss": max(s["rss"] for s in samples), "exit": samples[-1]["exit"]}


def available(command):
    """Whether ``kubectl-safety COMMAND --help`` works (the command exists in this checkout)."""
    return measure(EXE + command.split() + ["--help"])["exit"] == 0


def startup_cases():
    complete = {"_KUBECTL_SAFETY_COMPLETE": "bash_complete", "COMP_WORDS": "kubectl-safety dr", "COMP_CWORD": "1"}
    floor = {"name": "floor: import click, yaml", "argv": [PY, "-c", "import click, yaml"]}
    return floor, [
        {"name": "kubectl-safety --help", "argv": EXE + ["--help"]},
        {"name": "completion (bash, 'dr')", "argv": EXE, "env": complete},
    ]


def dump(nodes):
    """(path of the dump of ``nodes`` nodes, generated on demand; its targets; the --snapshot flags)."""
    path = os.path.join(DATA, f"cluster-{nodes}.json")
    if not os.path.exists(path):
        subprocess.run([PY, os.path.join(HERE, "generate.py"), "--nodes", str(nodes)], check=True)
    with open(os.path.join(DATA, f"cluster-{nodes}.targets.json")) as f:
        t = json.load(f)
    return path, t, ["--snapshot", os.path.relpath(path, ROOT), "--now", "2026-11-22T09:00:00Z"]


def check_cases(nodes, notes):
    """``check`` (every node planned alone) against its floor: one capacity-aware ``drain NODE
    --dry-run`` with the flags check assumes, on the same dump."""
    _, t, snap = dump(nodes)
    floor = {"name": "floor: drain NODE --dry-run", "argv": EXE + ["drain", t["node"], "--dry-run",
                                                                   "--ignore-daemonsets", "--delete-emptydir-data"] + snap}
    if not available("check"):
        notes.append("check: skipped (command not available in this checkout)")
        return floor, []
    return floor, [{"name": f"check ({nodes} nodes)", "argv": EXE + ["check"] + snap}]


def snapshot_cases(nodes, notes, before=None):
    """The floor (json.load of the dump) and each offline command on the dump of ``nodes`` nodes."""
    path, t, snap = dump(nodes)
    pod, node = t["pod"], t["node"]
    candidates = [
        ("explain pod", ["explain", "pod", pod["name"], "-n", pod["namespace"]]),
        ("explain node", ["explain", "node", node]),
        ("drain NODE --dry-run", ["drain", node, "--dry-run", "--ignore-daemonsets"]),
        ("preemption -f POD", ["preemption", "-f", os.path.join("benchmarks", "data", f"preemptor-{nodes}.yaml")]),
    ]
    candidates.append(("check", ["check"]))
    if "rebalance" in t:
        candidates.append(("rebalance WORKLOAD --dry-run",
                           ["rebalance", t["rebalance"]["workload"], "-n", t["rebalance"]["namespace"], "--dry-run"]))
    floor = {"name": "floor: json.load, gc off",
             "argv": [PY, "-c", f"import gc, json; gc.disable(); json.load(open({path!r}))"]}
    cases = [{"name": "reference: json.load, gc on", "reference": True,
              "argv": [PY, "-c", f"import json; json.load(open({path!r}))"]}]
    if nodes >= BUDGETS["large"]["nodes"]:  # 11 GB (orjson: 16 GB) each: the floor alone on a shared machine
        cases = []
    # The lower bound of any command that reads every object: the bytes read, then parsed with
    # every field skipped (msgspec into a Struct without fields), nothing built.
    cases += [{"name": "reference: read the file", "reference": True,
               "argv": [PY, "-c", f"open({path!r}, 'rb').read()"]},
              {"name": "reference: msgspec parse, nothing kept", "reference": True,
               "argv": [PY, "-c", "import msgspec; msgspec.json.decode(open(%r, 'rb').read(), type=msgspec.defstruct("
                                  "'List', [('items', list[msgspec.defstruct('Item', [])])]))" % path]}]
    try:
        import orjson  # noqa: F401

        if nodes < BUDGETS["large"]["nodes"]:
            cases.append({"name": "reference: orjson.loads, gc off", "reference": True,
                          "argv": [PY, "-c", f"import gc, orjson; gc.disable(); orjson.loads(open({path!r}, 'rb').read())"]})
    except ImportError:
        notes.append("orjson not installed: pip install -e '.[benchmark]' adds the orjson reference")
    for name, args in candidates:
        if not available(args[0]):
            notes.append(f"{name}: skipped (command not available in this checkout)")
            continue
        cases.append({"name": name, "argv": EXE + args + snap})
        if before:
            cases.append({"name": f"before: {name}", "reference": True, "argv": EXE + args + snap,
                          "env": {"PYTHONPATH": before}})
    return floor, cases


def run_group(kind, label, floor, cases, runs, warm_up=False, nodes=None):
    """Interleaved rounds: the floor then every case, ``runs`` times; ratios to the floor.

    ``warm_up``: one unmeasured run of each case first (fills the bytecode and file caches).
    """
    samples = {c["name"]: [] for c in [floor] + cases}
    for case in ([floor] + cases) if warm_up else ():
        measure(case["argv"], case.get("env"))
    for _ in range(runs):
        for case in [floor] + cases:
            samples[case["name"]].append(measure(case["argv"], case.get("env")))
    base = summarize(samples[floor["name"]])
    rows = [{"group": label, "kind": kind, "name": floor["name"], **base, "wallRatio": 1.0, "cpuRatio": 1.0,
             "rssRatio": 1.0, "argv": shlex.join(floor["argv"])}]
    for case in cases:
        s = summarize(samples[case["name"]])
        row = {"group": label, "kind": kind, "name": case["name"], **s,
               "wallRatio": s["wall"] / base["wall"], "cpuRatio": s["cpu"] / base["cpu"],
               "rssRatio": s["rss"] / base["rss"], "argv": shlex.join(case["argv"])}
        budget = BUDGETS[kind]
        if case.get("reference"):
            rows.append(row)
            continue
        row["withinBudget"] = (row["wallRatio"] <= budget["wall"]
                               and row["rssRatio"] <= budget.get("rss", float("inf")))
        large = BUDGETS["large"]
        if kind == "snapshot" and nodes is not None and nodes >= large["nodes"]:  # absolute limits instead
            row["withinBudget"] = s["wall"] <= large["wallSeconds"] and s["rss"] <= large["rssMiB"]
        if s["exit"] not in (0, 3):
            row["error"] = samples[case["name"]][-1]["stderr"].splitlines()[-1:] or [f"exit {s['exit']}"]
        rows.append(row)
    return rows


def machine():
    info = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        info["cpu"] = next((ln.split(":", 1)[1].strip() for ln in lscpu.splitlines() if ln.startswith("Model name")), "")
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            info["memTotalGiB"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
        info["loadAverage"] = os.getloadavg()
    except OSError:
        pass
    try:
        import orjson  # noqa: F401

        info["orjson"] = True
    except ImportError:
        info["orjson"] = False
    return info


def print_table(rows, notes):
    headers = ["benchmark", "runs", "wall median s", "spread", "cpu s", "peak RSS MiB", "wall x", "cpu x", "RSS x", "budget"]
    lines, group = [], None
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            lines.append([f"[{group}]"] + [""] * (len(headers) - 1))
        budget = "" if "withinBudget" not in r else ("ok" if r["withinBudget"] else "MISS")
        if r.get("error"):
            budget = f"exit {r['exit']}: {r['error'][0][:60]}"
        lines.append([r["name"], r["runs"], f"{r['wall']:.3f}", f"{r['spread'] * 100:.0f}%", f"{r['cpu']:.2f}",
                      f"{r['rss']:.0f}", f"{r['wallRatio']:.2f}", f"{r['cpuRatio']:.2f}", f"{r['rssRatio']:.2f}", budget])
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *lines)]
    for line in [headers] + lines:
        print("  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip())
    for note in notes:
        print(f"note: {note}")


def merged(previous, result) -> dict:
    """``result`` written over ``previous``: the groups it measured replace theirs (keeping the group
    order), the other groups' rows and the other keys (``live``, ``drainRequests``) stay. Each
    group's rows say when and at which commit they were measured."""
    for run in (previous, result):
        for row in run.get("results", []):
            row.setdefault("startedAt", run.get("startedAt"))
            row.setdefault("commit", run.get("commit"))
    fresh = {}
    for row in result["results"]:
        fresh.setdefault(row["group"], []).append(row)
    rows, placed = [], set()
    for row in previous.get("results", []):
        group = row["group"]
        if group not in fresh:
            rows.append(row)
        elif group not in placed:
            rows += fresh[group]
            placed.add(group)
    rows += [r for group, group_rows in fresh.items() if group not in placed for r in group_rows]
    notes = result["notes"] + [n for n in previous.get("notes", []) if n not in result["notes"]]
    return {**previous, **result, "results": rows, "notes": notes}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000", help="snapshot sizes in nodes, comma-separated (default 100,1000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per snapshot benchmark (default 3)")
    parser.add_argument("--startup-runs", type=int, default=10, help="runs per start-up benchmark (default 10)")
    parser.add_argument("--only", choices=["startup", "snapshot", "check"], help="run one group only")
    parser.add_argument("--before", help="another checkout whose commands run beside these (PYTHONPATH=DIR)")
    parser.add_argument("--out", default=RESULTS, help="JSON results file (default benchmarks/results/latest.json)")
    args = parser.parse_args(argv)
    rows, notes = [], []
    started = datetime.now(timezone.utc)
    subprocess.run([PY, "-m", "compileall", "-q", os.path.join(ROOT, "kubectl_safety")], env=BASE_ENV, check=True)
    if args.only in (None, "startup"):
        floor, cases = startup_cases()
        rows += run_group("startup", "start-up", floor, cases, args.startup_runs, warm_up=True)
    if args.only in (None, "snapshot"):
        for nodes in [int(n) for n in args.sizes.split(",") if n]:
            floor, cases = snapshot_cases(nodes, notes, args.before)
            rows += run_group("snapshot", f"snapshot {nodes} nodes, {nodes * 30} pods", floor, cases, args.runs,
                              nodes=nodes)
    if args.only == "check":  # minutes per round at 5,000 nodes: asked for by name
        for nodes in [int(n) for n in args.sizes.split(",") if n]:
            floor, cases = check_cases(nodes, notes)
            rows += run_group("check", f"check vs drain, {nodes} nodes, {nodes * 30} pods", floor, cases, args.runs)
    notes.append("live benchmarks (kwok control plane): benchmarks/live.py")
    print_table(rows, notes)
    result = {"startedAt": started.isoformat(), "machine": machine(), "budgets": BUDGETS,
              "results": rows, "notes": notes}
    try:
        result["commit"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except OSError:
        pass
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    if os.path.exists(args.out):
        with open(args.out) as f:
            result = merged(json.load(f), result)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"wrote {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
