"""shine.explore(..., cluster=client) on a local Dask cluster of two worker processes: it finds
what a single-host run finds (C and OpenCL), its best re-runs and agrees with the interpreter,
and a worker killed while it measures a candidate fails that candidate only ("worker lost"),
the database stays intact and the next run measures nothing it already has."""

import os
import signal
import sqlite3

import numpy as np
import pytest

import shine

distributed = pytest.importorskip(
    "distributed", reason="dask[distributed] is not installed (pip install 'dask[distributed]')"
)
import dask  # noqa: E402  (installed with distributed)

PROGRAM = """
def scale2d = fun (a: f32) m => m |> map (fun row => row |> map (fun x => x * a))
"""

# splitOuter(s): the outer map split into chunks of s rows (s must divide n)
STRATEGY = """
def splitOuter(s) = DFNF ; splitJoinMap(s) @ outermost(appliedMap) ;; DFNF ; lowerToC
"""

# s = 4 divides n = 8 only, s = 3 divides n = 12 and n = 9 only, s = 5 no n: each time set's
# best is one candidate whatever the times, so that two runs must find the same
TIME_SIZES = [{"n": 8, "m": 4}, {"n": 9, "m": 2}]

TARGETS = [
    "c",
    pytest.param("opencl", marks=pytest.mark.skipif(
        os.environ.get("SHINE_SKIP_OPENCL") == "1", reason="SHINE_SKIP_OPENCL=1")),
    pytest.param("cuda", marks=pytest.mark.skipif(
        os.environ.get("SHINE_TEST_GPU") != "1",
        reason="the CUDA variant runs on a GPU machine, with SHINE_TEST_GPU=1")),
]


def tune(target="c", **kwargs):
    return shine.explore(
        PROGRAM, "scale2d", STRATEGY, "splitOuter(s)", target=target,
        params={"s": [3, 4, 5]},
        verify_sizes=[{"n": 8, "m": 4}, {"n": 12, "m": 4}],
        time_sizes=TIME_SIZES,
        budget=3, runs=1, **kwargs)


def shape(result):
    """Per candidate: its failure's cause and the sets it ran at."""
    return sorted(
        (rec["params"]["s"], rec["failure"] and rec["failure"].split(":")[0],
         [ms is not None for ms in rec["ms_per_set"]])
        for rec in result.records)


def best_params(result):
    return [b and b["params"] for b in result.best]


@pytest.fixture(scope="module")
def client():
    # a task whose worker died is given to one other worker (Dask's retry), then lost
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster:
            with distributed.Client(cluster) as c:
                yield c


@pytest.mark.parametrize("target", TARGETS)
def test_a_cluster_finds_the_single_host_best_and_it_reruns(client, target):
    here = tune(target)
    there = tune(target, cluster=client)
    assert shape(there) == shape(here) == [
        (3, None, [False, True]), (4, None, [True, False]), (5, "not verified", [False, False])]
    assert best_params(there) == best_params(here) == [{"s": 4}, {"s": 3}]
    # the kept candidates were verified by the workers: only s = 5 failed, before timing
    assert there.valid == 2 and there.failures_by_cause == {"not verified": 1}
    for k in (0, 1):
        kernel = there.best_kernel(k)
        n, m = there.best[k]["sizes"]["n"], there.best[k]["sizes"]["m"]
        x = np.arange(n * m, dtype=np.float32).reshape(n, m)
        a = np.float32(1.5)
        assert np.allclose(kernel(a, x), shine.eval(PROGRAM, "scale2d", a, x))


def test_the_cluster_shares_the_database_with_this_host(client, tmp_path):
    db = str(tmp_path / "tune.db")
    there = tune(cluster=client, db=db)
    assert (there.timed, there.from_database) == (2, 0)
    here = tune(db=db)
    assert (here.timed, here.from_database) == (0, 3)
    assert best_params(here) == best_params(there)


def test_this_hosts_workers_and_devices_are_refused_with_a_cluster(client):
    with pytest.raises(ValueError, match="jobs= and devices="):
        tune(cluster=client, jobs=2)


class KillWhileMeasuring(distributed.WorkerPlugin):
    """Kills its worker's process when the worker starts measuring the candidate `label`."""

    def __init__(self, label):
        self.label = label

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and f"-{self.label}-" in str(key):
            os.kill(os.getpid(), signal.SIGKILL)


def outcomes_of(db, s):
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return conn.execute("SELECT stage, sizes FROM outcomes WHERE assignment = ?",
                            (f"s={s}",)).fetchall()


def test_a_killed_worker_loses_its_candidate_only(client, tmp_path):
    db = str(tmp_path / "tune.db")
    client.register_plugin(KillWhileMeasuring("s=4"), name="kill-s4")
    try:
        first = tune(cluster=client, db=db, log=str(tmp_path / "run.jsonl"))
    finally:
        client.unregister_worker_plugin("kill-s4")
    lost = next(rec for rec in first.records if rec["params"] == {"s": 4})
    assert lost["failure"].startswith("worker lost: ")
    assert first.failures_by_cause == {"not verified": 1, "worker lost": 1}
    assert first.best[0] is None and first.best[1]["params"] == {"s": 3}
    # the database is intact and holds nothing of the lost candidate
    assert outcomes_of(db, 4) == []
    assert len(outcomes_of(db, 3)) == 3  # verified, and timed at both sets
    # the nannies restart the killed workers; the next run measures the lost candidate only
    client.wait_for_workers(2, timeout=120)
    second = tune(cluster=client, db=db)
    assert (second.timed, second.from_database) == (1, 2)
    assert best_params(second) == [{"s": 4}, {"s": 3}]
