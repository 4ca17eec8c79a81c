"""shine.explore(..., cluster=client): a tuning's candidates measured on the workers of a Dask
cluster (``dask.distributed``), while this process keeps the search, the database and the log.

Each candidate a batch needs measured is one Dask task, ``_measure(request_json)``: a worker
compiles, verifies and times it with its own shine (the request carries every text it
needs) and answers with a measurement as JSON. A task whose workers died while running it
(after the scheduler gave it to others, ``distributed.scheduler.allowed-failures``) is
answered as lost: that candidate fails with the cause "worker lost", the run goes on.

Timing wants one task at a time per machine (or per GPU): workers that declare the resource
``timing`` (``dask worker ... --resources timing=1``) get the tasks and run one each at a
time; without it, every worker thread takes tasks (start workers with ``--nthreads 1``).
"""

import uuid

from ._shine import Error, _evaluate_candidate, _worker_identity

#: The worker resource a candidate's task takes, where workers declare it.
TIMING = "timing"


def _workers(client):
    """The scheduler's view of the workers: address -> info (nthreads, resources)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # distributed before 2025.4 lists every worker by default
        info = client.scheduler_info()
    return info["workers"]


def _timing_workers(client):
    """The workers that declare the ``timing`` resource: address -> its amount."""
    return {
        address: w.get("resources", {}).get(TIMING, 0)
        for address, w in _workers(client).items()
        if w.get("resources", {}).get(TIMING, 0) > 0
    }


def capacity(client):
    """How many candidates the cluster measures at once: the ``timing`` slots of the workers
    that declare them, else every worker thread."""
    workers = _workers(client)
    if not workers:
        raise Error("the cluster has no workers: start some (`dask worker SCHEDULER_ADDRESS`)")
    timing = _timing_workers(client)
    if timing:
        return int(sum(timing.values()))
    return sum(w["nthreads"] for w in workers.values())


def _identity(target):
    return _worker_identity(target)


def identity(client, target):
    """The device and toolchain the measuring workers use, as the tuning database names them;
    an error if they differ (one database context holds one kind of machine)."""
    measuring = list(_timing_workers(client)) or None
    answers = client.run(_identity, target, workers=measuring)
    kinds = sorted(set(tuple(a) for a in answers.values()))
    if len(kinds) != 1:
        raise Error(
            "the cluster's workers measure on different devices or toolchains ("
            + "; ".join(f"{device}, {version}" for device, version in kinds)
            + "): tune on one kind of machine per cluster"
        )
    return kinds[0]


def _measure(request_json):
    """A task on a worker: one candidate compiled, verified and timed there."""
    return _evaluate_candidate(request_json)


def measure(client, requests):
    """Measures ``requests`` (pairs of a candidate's label and its request as JSON), one task
    each, gathered as they complete: per request ``(True, measurement_json)``, or
    ``(False, why)`` where it was lost with its workers. Any other exception of a task (a
    worker without shine, say) cancels the batch and is raised."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    resources = {TIMING: 1} if _timing_workers(client) else None
    futures = [
        client.submit(
            _measure,
            request,
            key=f"shine-candidate-{label}-{uuid.uuid4().hex}",
            pure=False,
            retries=1,
            resources=resources,
        )
        for label, request in requests
    ]
    index = {f.key: i for i, f in enumerate(futures)}
    answers = [None] * len(futures)
    try:
        for future in as_completed(futures):
            try:
                answers[index[future.key]] = (True, future.result())
            except KilledWorker as e:
                answers[index[future.key]] = (False, _lost(e))
    except BaseException:
        client.cancel(futures)
        raise
    return answers


def _lost(e):
    """Why a task was lost, in one line."""
    first = str(e).split(". ")[0].strip()
    return f"the workers measuring it died ({type(e).__name__}: {first})"
