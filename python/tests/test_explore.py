"""shine.explore: a tiny tuning of a split size on the C target; the best per size set is
verified, compiles as a Kernel that agrees with the interpreter, the counts add up, the log
resumes, bad requests raise, and Ctrl-C stops the search between candidates."""

import _thread
import json
import threading
import time

import numpy as np
import pytest

import shine

PROGRAM = """
def scale2d = fun (a: f32) m => m |> map (fun row => row |> map (fun x => x * a))
"""

# splitOuter(s): the outer map split into chunks of s rows (s must divide n)
STRATEGY = """
def splitOuter(s) = DFNF ; splitJoinMap(s) @ outermost(appliedMap) ;; DFNF ; lowerToC
"""


def tune(**kwargs):
    args = dict(
        target="c",
        params={"s": [2, 3, 4, 5]},
        verify_sizes=[{"n": 8, "m": 4}, {"n": 12, "m": 4}],
        time_sizes=[{"n": 8, "m": 4}, {"n": 12, "m": 2}],
        budget=4,
        runs=1,
    )
    args.update(kwargs)
    return shine.explore(PROGRAM, "scale2d", STRATEGY, "splitOuter(s)", **args)


def test_the_best_per_set_is_verified_and_the_counts_add_up(tmp_path):
    log = tmp_path / "run.jsonl"
    r = tune(log=str(log))
    assert r.raw_assignments == 4 and r.valid_assignments == 4
    assert r.candidates == 4
    assert r.valid + r.failed == r.candidates
    # s = 5 divides neither 8 nor 12: no verification set applies to it
    assert r.failed == 1 and r.failures_by_cause == {"not verified": 1}
    assert [m["candidates"] for m in r.methods] == [4]
    assert r.methods[0]["valid"] == r.valid == 3
    by_s = {rec["params"]["s"]: rec for rec in r.records}
    assert by_s[5]["failure"].startswith("not verified")
    assert by_s[3]["ms_per_set"][0] is None and by_s[3]["ms_per_set"][1] > 0
    # the best of each set is the fastest candidate timed there
    for k, best in enumerate(r.best):
        times = [rec["ms_per_set"][k] for rec in r.records if rec["ms_per_set"][k] is not None]
        assert best["ms"] == min(times)
        assert best["sizes"] == {**r.time_sizes[k]}
        assert "def best" in best["strategy"]
    assert r.best[0]["params"]["s"] in (2, 4)
    assert r.sum_of_set_bests == pytest.approx(r.best[0]["ms"] + r.best[1]["ms"])
    # the best compiles as a Kernel that agrees with the interpreter
    for k in (0, 1):
        kernel = r.best_kernel(k)
        n, m = r.best[k]["sizes"]["n"], r.best[k]["sizes"]["m"]
        x = np.arange(n * m, dtype=np.float32).reshape(n, m)
        a = np.float32(1.5)
        assert np.allclose(kernel(a, x), shine.eval(PROGRAM, "scale2d", a, x))
    assert r.best_on_every_set["params"]["s"] in (2, 4)
    r.best_kernel()
    # the log: a header and one line per candidate; resumed, nothing is re-run
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines[0]["kind"] == "shine explore log" and len(lines) == 5
    again = tune(resume=str(log))
    assert again.methods[0]["resumed"] == 4 and again.methods[0]["candidates"] == 0
    assert again.best[0]["ms"] == r.best[0]["ms"]


TWO_SPLITS = """
def twoSplits(s, r) = DFNF ; splitJoinMap(s) @ outermost(appliedMap) ;;
  DFNF ; splitJoinMap(r) @ outermost(appliedMap) ;; DFNF ; lowerToC
"""


def test_derived_parameters_requirements_and_several_methods():
    r = shine.explore(
        PROGRAM, "scale2d", TWO_SPLITS, "twoSplits(s, r)",
        params={"s": [2, 4], "r": "4/s"},
        require=["r>=2"],
        verify_sizes={"n": 8, "m": 4},
        methods=["solver", "random"],
        budget=1,
        runs=1,
    )
    # (s, r) = (2, 2) or (4, 1), which the requirement excludes
    assert r.raw_assignments == 2 and r.valid_assignments == 1
    assert [m["method"] for m in r.methods] == ["solver", "random"]
    assert r.candidates == 2 and r.valid + r.failed == 2
    assert all(rec["params"] == {"s": 2, "r": 2} for rec in r.records)
    assert r.best[0]["sizes"] == {"n": 8, "m": 4}


def test_bad_requests_raise_before_the_search():
    with pytest.raises(ValueError, match="budget"):
        tune(budget=None)
    with pytest.raises(ValueError, match="no search method"):
        tune(methods=["annealing"])
    with pytest.raises(ValueError, match="params"):
        tune(params={})
    with pytest.raises(shine.Error, match=r'`params\["q"\]` names neither a parameter'):
        tune(params={"q": [1, 2]})
    with pytest.raises(shine.Error, match="no size of `scale2d`"):
        tune(verify_sizes={"k": 3})
    with pytest.raises(shine.CompileError):
        shine.explore("def f = oops", "f", STRATEGY, "splitOuter(s)", params={"s": [2]},
                      verify_sizes={"n": 4}, budget=1)


def test_ctrl_c_stops_the_search_between_candidates():
    # 60 candidates take far longer than the interrupt's half second
    timer = threading.Timer(0.5, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tune(params={"s": list(range(1, 61))}, budget=60)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 30


def test_a_database_and_workers_are_passed_through(tmp_path):
    db = str(tmp_path / "tune.db")
    first = tune(db=db, jobs=2)
    assert (first.timed, first.from_database) == (3, 0)
    again = tune(db=db, jobs=2)
    assert (again.timed, again.from_database) == (0, 4)
    assert [b and b["params"] for b in again.best] == [b and b["params"] for b in first.best]
    with pytest.raises(shine.Error, match="devices="):
        tune(devices=[0])
    with pytest.raises(ValueError, match="jobs="):
        tune(jobs=0)
