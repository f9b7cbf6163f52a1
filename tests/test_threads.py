"""Launches from several Python threads at once (task runtimes run kernels
from worker threads): each thread's own work is exact, updates of one shared
View from every thread all land, and a host read never sees a kernel half
done. Runs eagerly and lazily (conftest)."""
from __future__ import annotations

import threading

import numpy as np

import pykokkos as pk

THREADS = 4


@pk.workunit
def fill(i, v, x):
    v[i] = x * i


@pk.workunit
def tot(i, acc, v):
    acc += v[i]


@pk.workunit
def bump(i, v):
    v[i] = v[i] + 1.0


def _run(target, args_of):
    errors: list[BaseException] = []

    def guarded(*a):
        try:
            target(*a)
        except BaseException as e:  # reported by the test thread
            errors.append(e)

    ts = [threading.Thread(target=guarded, args=args_of(k)) for k in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def test_each_thread_launches_and_reads_its_own_views():
    def work(k):
        n = 1000 + k
        v = pk.View([n], pk.double)
        for it in range(20):
            pk.parallel_for(n, fill, v=v, x=float(it))
            assert float(pk.parallel_reduce(n, tot, v=v)) == it * n * (n - 1) / 2
            np.testing.assert_array_equal(np.asarray(v), it * np.arange(n, dtype=float))

    _run(work, lambda k: (k,))


def test_updates_of_a_shared_view_from_every_thread_all_land():
    n, rounds = 4096, 25
    shared = pk.View([n], pk.double)

    totals: list[float] = []

    def work(k):
        for _ in range(rounds):
            pk.parallel_for(n, bump, v=shared)
            # Lazily each thread's read flushes while others record and flush.
            totals.append(float(pk.parallel_reduce(n, tot, v=shared)))

    _run(work, lambda k: (k,))
    np.testing.assert_array_equal(np.asarray(shared), np.full(n, THREADS * rounds, dtype=float))
    # Every total saw whole kernels only: all elements equal, at least one bump.
    assert all(t % n == 0 and n <= t <= n * THREADS * rounds for t in totals), totals


def test_a_reader_thread_sees_each_launch_of_a_writer_thread_whole():
    # Lockstep: the writer launches, then signals; the reader reads, then acks.
    # Lazily the launch is still pending when the reader reads: the read runs it.
    n, rounds = 4096, 30
    shared = pk.View([n], pk.double)
    launched, read = threading.Semaphore(0), threading.Semaphore(0)
    seen: list[np.ndarray] = []

    def writer():
        for _ in range(rounds):
            pk.parallel_for(n, bump, v=shared)
            launched.release()
            read.acquire()

    def reader():
        for _ in range(rounds):
            launched.acquire()
            seen.append(np.array(shared))
            read.release()

    ts = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert [s.min() for s in seen] == [s.max() for s in seen] == [float(r + 1) for r in range(rounds)]
