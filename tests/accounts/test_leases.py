"""Leases: exclusive across processes, waiting, exhaustion, crashes, quarantine."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections import defaultdict

import pytest
from accounts_helpers import HOLDER, POOL_FILE, WORKER

from docverify.lease import AccountQuarantined, NoSuchAccount, PoolExhausted, open_pool


@pytest.fixture()
def accounts_file(workdir):
    path = workdir / "docverify-accounts.toml"
    path.write_text(POOL_FILE, encoding="utf-8")
    return path


@pytest.fixture()
def pool(accounts_file, lease_dir):
    return open_pool(accounts_file=accounts_file, lease_dir=lease_dir, environ={})


@pytest.fixture()
def holder(accounts_file, lease_dir):
    """Start a separate process holding an account; returns (process, name)."""
    started = []

    def start(name: str = "-", timeout: float = 0) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(accounts_file), str(lease_dir), name, str(timeout)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        line = proc.stdout.readline()
        assert line.startswith("held "), proc.stderr.read()
        proc.leased = line.split()[1]
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_a_lease_held_by_another_process_is_exclusive(pool, holder):
    other = holder("a")
    with pytest.raises(PoolExhausted) as info:
        pool.acquire("a", timeout=0)
    message = str(info.value)
    assert message.startswith(f"account pool exhausted: 1 account, leased (holders: a by pid {other.pid} (holder)")
    assert "did not wait" in message and "--lease-timeout" in message
    with pool.lease(timeout=0) as lease:  # the other one is free
        assert lease.name == "b"


def test_all_leased_names_every_holder(pool, holder):
    first, second = holder("a"), holder("b")
    with pytest.raises(PoolExhausted) as info:
        pool.acquire(timeout=0)
    message = str(info.value)
    assert message.startswith("account pool exhausted: 2 accounts, all leased (holders: ")
    assert f"a by pid {first.pid}" in message and f"b by pid {second.pid}" in message


def test_exhausted_pool_waits_for_the_timeout_then_fails(pool, holder):
    holder("a"), holder("b")
    started = time.monotonic()
    with pytest.raises(PoolExhausted, match="waited 0.6s"):
        pool.acquire(timeout=0.6)
    assert time.monotonic() - started >= 0.55  # it waited out its timeout before failing


def test_a_waiting_lease_gets_the_account_when_it_is_released(pool, holder):
    other = holder("a")
    released = threading.Event()

    def release() -> None:
        released.set()  # before the holder lets go: a lease granted earlier would find it unset
        other.stdin.write("\n")
        other.stdin.flush()

    timer = threading.Timer(0.3, release)
    timer.start()
    with pool.lease("a", timeout=30) as lease:
        assert lease.name == "a" and released.is_set()
    timer.join()


def test_a_crashed_holder_releases_its_lease(pool, holder):
    other = holder("a")
    assert pool.holder("a")[0] is True
    other.kill()
    other.wait()
    assert pool.holder("a") == (False, None)
    with pool.lease("a", timeout=0) as lease:
        assert lease.holder.label == ""


def test_processes_never_share_an_account(accounts_file, lease_dir, workdir):
    log = workdir / "leases.log"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(accounts_file), str(lease_dir), str(log), "5"],
                                stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for worker in workers:
        assert worker.wait(timeout=120) == 0, worker.stderr.read()
    spans = defaultdict(list)
    for line in log.read_text().splitlines():
        name, start, end, _pid = line.split()
        spans[name].append((float(start), float(end)))
    assert sum(len(s) for s in spans.values()) == 20
    for name, intervals in spans.items():
        intervals.sort()
        for (_, end), (start, _) in zip(intervals, intervals[1:]):
            assert start >= end, f"account {name} was leased twice at once"


def test_threads_of_one_process_are_exclusive_too(pool):
    first = pool.acquire("a")
    with pytest.raises(PoolExhausted):
        pool.acquire("a")
    first.release()
    first.release()  # idempotent
    pool.acquire("a").release()


def test_async_leases_wait_for_each_other(pool):
    order = []

    async def task(label: str) -> None:
        async with pool.lease_async("a", timeout=10, label=label) as lease:
            order.append(("start", label, lease.name))
            await asyncio.sleep(0.2)
            order.append(("end", label, lease.name))

    async def main() -> None:
        await asyncio.gather(task("one"), task("two"))

    asyncio.run(main())
    assert [kind for kind, *_ in order] == ["start", "end", "start", "end"]


def test_filters_by_console_and_tags(pool):
    with pool.lease(console="aliyun") as lease:
        assert lease.name == "b"
    with pool.lease(tags=["nightly"]) as lease:
        assert lease.name == "b"
    with pytest.raises(NoSuchAccount) as info:
        pool.acquire(console="aliyun", tags=["gpu"])
    assert "no account matches console=aliyun tags=gpu; accounts: a (sandbox, tags ecs)" in str(info.value)
    with pytest.raises(NoSuchAccount, match="no account named 'zz'"):
        pool.acquire("zz")


def test_quarantine_is_skipped_persisted_and_released(pool, accounts_file, lease_dir, holder):
    with pool.lease("a") as lease:
        lease.quarantine("login failed: wrong password")
    assert lease.released
    # a new pool (another run) sees it
    again = open_pool(accounts_file=accounts_file, lease_dir=lease_dir, environ={})
    (status_a, _) = again.status()
    assert status_a.quarantine.reason == "login failed: wrong password" and status_a.quarantine.since
    with pytest.raises(AccountQuarantined, match="release-quarantine a"):
        again.acquire("a")
    # another process leasing any account gets the healthy one
    other = holder("-")
    assert other.leased == "b"
    with pytest.raises(PoolExhausted) as info:
        again.acquire(timeout=0)
    assert "1 leased (holders: b by pid" in str(info.value)
    assert "1 quarantined (a: login failed: wrong password)" in str(info.value)
    assert again.release_quarantine("a").reason == "login failed: wrong password"
    with again.lease(timeout=0) as lease:
        assert lease.name == "a"
    assert again.release_quarantine("a") is None


def test_secrets_are_resolved_when_leased_and_a_failure_releases(workdir, lease_dir):
    path = workdir / "docverify-accounts.toml"
    path.write_text('[accounts.x]\nconsole = "aliyun"\nlogin_user = "u"\npassword = "env:X_PW"\n')
    pool = open_pool(accounts_file=path, lease_dir=lease_dir, environ={})
    assert pool.status()[0].spec.references() == {"password": "env:X_PW"}  # listing needs no secret
    with pytest.raises(Exception, match="X_PW is not set"):
        pool.acquire("x")
    assert pool.holder("x") == (False, None)
    ok = open_pool(accounts_file=path, lease_dir=lease_dir, environ={"X_PW": "pw-from-env-1"})
    with ok.lease("x") as lease:
        assert lease.account.password.reveal() == "pw-from-env-1"
