"""``benchmarks/run.py`` writes one group's rows over the results file without losing the others."""

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
spec = importlib.util.spec_from_file_location("bench_run", os.path.join(ROOT, "benchmarks", "run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)


def results(started, commit, *rows, **extra):
    return {"startedAt": started, "commit": commit, "notes": [f"note {started}"],
            "results": [{"group": g, "name": n} for g, n in rows], **extra}


OLD = results("t0", "c0", ("start-up", "floor"), ("snapshot 1000", "drain"), ("check 1000", "check"),
              live={"nodes": 1000}, drainRequests={"results": []})


@pytest.mark.parametrize("new, rows", [
    (results("t1", "c1", ("check 1000", "check")),
     [("start-up", "floor", "c0"), ("snapshot 1000", "drain", "c0"), ("check 1000", "check", "c1")]),
    (results("t1", "c1", ("check 5000", "check")),
     [("start-up", "floor", "c0"), ("snapshot 1000", "drain", "c0"), ("check 1000", "check", "c0"),
      ("check 5000", "check", "c1")]),
    (results("t1", "c1", ("start-up", "floor"), ("start-up", "help")),
     [("start-up", "floor", "c1"), ("start-up", "help", "c1"), ("snapshot 1000", "drain", "c0"),
      ("check 1000", "check", "c0")]),
], ids=["a-measured-group-replaces-its-rows", "a-new-group-is-added", "a-group-keeps-its-place"])
def test_a_run_of_some_groups_keeps_the_other_groups_and_keys(new, rows):
    import copy

    out = run.merged(copy.deepcopy(OLD), new)
    assert [(r["group"], r["name"], r["commit"]) for r in out["results"]] == rows
    assert (out["live"], out["drainRequests"], out["startedAt"]) == ({"nodes": 1000}, {"results": []}, "t1")
    assert out["notes"] == ["note t1", "note t0"]
