"""Sharding (docverify/run/shard.py): INDEX/COUNT, procedure keys, the split by hash and
by expected time (complete, disjoint, deterministic), durations from the results store."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docverify.check.verdict import Verdict
from docverify.errors import UsageError
from docverify.report.trajectory import ProcedureResult
from docverify.run.shard import (
    ShardSpec,
    check_balance,
    expected_costs,
    hash_shard,
    plan_digest,
    procedure_key,
    split,
    store_costs,
    take_shard,
)
from docverify.run.store import ResultStore

KEYS = [f"docs/{product}/page-{n}.md#{product}-{n}" for product in ("oss", "ecs", "ram", "vpc") for n in range(30)]


def shards_of(plan: dict[str, int], count: int) -> list[set[str]]:
    return [{key for key, shard in plan.items() if shard == index} for index in range(1, count + 1)]


# -- --shard INDEX/COUNT -----------------------------------------------------------


@pytest.mark.parametrize(("text", "spec"), [("1/1", (1, 1)), ("2/4", (2, 4)), (" 4 / 4 ", (4, 4)), ("10/12", (10, 12))])
def test_a_shard_spec_reads_index_and_count(text, spec):
    parsed = ShardSpec.parse(text)
    assert (parsed.index, parsed.count) == spec
    assert str(parsed) == f"{spec[0]}/{spec[1]}"


@pytest.mark.parametrize(("text", "says"), [
    ("0/2", "INDEX must be from 1 to 2"),
    ("3/2", "INDEX must be from 1 to 2"),
    ("1/0", "COUNT must be 1 or more"),
    ("a/b", "expected INDEX/COUNT"),
    ("2", "expected INDEX/COUNT"),
    ("-1/2", "expected INDEX/COUNT"),
    ("1/2/3", "expected INDEX/COUNT"),
    ("", "expected INDEX/COUNT"),
])
def test_a_bad_shard_spec_is_a_usage_error_naming_the_option(text, says):
    with pytest.raises(UsageError) as raised:
        ShardSpec.parse(text, option="--shard")
    assert str(raised.value).startswith(f"--shard {text!r}: ")
    assert says in str(raised.value)


# -- keys ------------------------------------------------------------------------------


def test_a_key_is_the_path_relative_to_the_working_folder_and_the_id(tmp_path):
    root = tmp_path / "repo"
    assert procedure_key("docs/a.md", "oss-create", root) == "docs/a.md#oss-create"
    assert procedure_key("./docs/../docs/a.md", "oss-create", root) == "docs/a.md#oss-create"
    assert procedure_key(str(root / "docs" / "a.md"), "oss-create", root) == "docs/a.md#oss-create"
    # outside the working folder: absolute
    assert procedure_key(str(tmp_path / "other" / "a.md"), "x", root) == f"{(tmp_path / 'other' / 'a.md').as_posix()}#x"
    assert procedure_key("../other/a.md", "x", root) == f"{(tmp_path / 'other' / 'a.md').as_posix()}#x"


# -- the split ---------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 16])
def test_the_hash_split_puts_every_procedure_in_exactly_one_shard(count):
    plan = split(KEYS, count)
    assert set(plan) == set(KEYS)
    assert all(1 <= shard <= count for shard in plan.values())
    parts = shards_of(plan, count)
    assert sum(len(part) for part in parts) == len(KEYS)
    assert set().union(*parts) == set(KEYS)
    if count <= 4:  # 120 keys: every shard gets some
        assert all(parts)


@pytest.mark.parametrize("count", [2, 3, 5])
def test_the_hash_split_ignores_order_and_the_other_procedures(count):
    plan = split(KEYS, count)
    shuffled = KEYS[:]
    random.Random(7).shuffle(shuffled)
    assert split(shuffled, count) == plan
    fewer = KEYS[::3]
    assert split(fewer, count) == {key: plan[key] for key in fewer}  # a doc removed moves nothing
    more = split([*KEYS, "docs/new.md#new"], count)
    assert {key: more[key] for key in KEYS} == plan  # a doc added moves nothing


@pytest.mark.parametrize(("key", "shards"), [
    ("docs/a.md#oss-create", [1, 2, 1, 6]),
    ("examples/docs/eip.md#eip-apply", [1, 1, 1, 4]),
    ("examples/docs/ram.md#ram-create-user", [2, 1, 4, 3]),
])
def test_the_hash_shard_of_a_key_never_changes(key, shards):
    """Pinned: shards run by different machines, Pythons or docverify versions agree
    (sha256 of the key, its first 8 bytes big-endian, mod COUNT, plus 1)."""
    assert [hash_shard(key, count) for count in (2, 3, 4, 7)] == shards
    assert hash_shard(key, 1) == 1


@given(st.lists(st.text(min_size=1, max_size=12), min_size=0, max_size=40, unique=True), st.integers(1, 9),
       st.randoms(use_true_random=False))
def test_the_split_is_complete_and_deterministic_for_any_keys(keys, count, rng):
    costs = {key: float(len(key) % 5) for key in keys}
    shuffled = keys[:]
    rng.shuffle(shuffled)
    for given_costs in (None, costs):
        plan = split(keys, count, given_costs)
        assert set(plan) == set(keys) and all(1 <= shard <= count for shard in plan.values())
        assert split(shuffled, count, given_costs) == plan


@pytest.mark.parametrize("count", [2, 3, 4, 6])
def test_the_split_by_time_is_complete_balanced_and_ignores_order(count):
    rng = random.Random(count)
    costs = {key: round(rng.uniform(5, 300), 1) for key in KEYS}
    plan = split(KEYS, count, costs)
    assert set(plan) == set(KEYS)
    parts = shards_of(plan, count)
    assert set().union(*parts) == set(KEYS) and sum(map(len, parts)) == len(KEYS)
    loads = [sum(costs[key] for key in part) for part in parts]
    # longest first to the least loaded: no shard is more than the longest procedure over another
    assert max(loads) - min(loads) <= max(costs.values())
    hashed = [sum(costs[key] for key in part) for part in shards_of(split(KEYS, count), count)]
    assert max(loads) - min(loads) <= max(hashed) - min(hashed)
    shuffled = KEYS[:]
    rng.shuffle(shuffled)
    assert split(shuffled, count, dict(reversed(list(costs.items())))) == plan


def test_the_split_by_time_breaks_ties_by_hash_not_by_order():
    keys = [f"docs/p{n}.md#p{n}" for n in range(8)]
    costs = dict.fromkeys(keys, 10.0)
    plan = split(keys, 4, costs)
    assert split(list(reversed(keys)), 4, costs) == plan
    assert sorted(list(plan.values()).count(shard) for shard in range(1, 5)) == [2, 2, 2, 2]


def test_expected_costs_use_the_median_and_fill_unknown_procedures():
    ids = {"a.md#a": "a", "b.md#b": "b", "c.md#c": "c", "d.md#d": "d"}
    history = {"a": [10.0, 12.0, 100.0], "b": [30.0], "c": [20.0]}
    costs = expected_costs(ids, history)
    assert costs == {"a.md#a": 12.0, "b.md#b": 30.0, "c.md#c": 20.0, "d.md#d": 20.0}
    assert expected_costs(ids, {}) is None
    assert expected_costs(ids, {"zzz": [4.0]}) is None


def test_take_shard_keeps_the_order_given_and_records_the_whole_selection(tmp_path):
    items = [(f"docs/p{n}.md", f"p{n}") for n in range(12)]
    key = lambda item: procedure_key(item[0], item[1], tmp_path)  # noqa: E731
    taken = [take_shard(items, ShardSpec(index, 3), key, root=tmp_path, commit="abc") for index in (1, 2, 3)]
    assert sorted(item for part in taken for item in part.items) == sorted(items)
    for index, part in enumerate(taken, 1):
        info = part.info
        assert (info.index, info.count, info.balance, info.commit) == (index, 3, "hash", "abc")
        assert part.items == [item for item in items if hash_shard(key(item), 3) == index]  # in the order given
        assert info.assigned == [key(item) for item in part.items]
        assert info.selected == [key(item) for item in items]
    assert len({part.info.selected_digest for part in taken}) == 1
    assert len({part.info.plan_digest for part in taken}) == 1
    # the same selection in another order: the same digests
    again = take_shard(list(reversed(items)), ShardSpec(1, 3), key, root=tmp_path)
    assert (again.info.selected_digest, again.info.plan_digest) == (taken[0].info.selected_digest,
                                                                    taken[0].info.plan_digest)
    # another split of the same selection: another plan digest
    costs = {key(item): float(n) for n, item in enumerate(items)}
    balanced = take_shard(items, ShardSpec(1, 3), key, root=tmp_path, costs=costs)
    assert balanced.info.balance == "store"
    assert balanced.info.selected_digest == taken[0].info.selected_digest
    assert balanced.info.plan_digest != taken[0].info.plan_digest
    assert plan_digest(split(map(key, items), 3)) == taken[0].info.plan_digest


# -- durations from the results store -------------------------------------------------------------


def stored(procedure_id: str, seconds: float, verdict: Verdict = Verdict.PASS, **extra) -> ProcedureResult:
    return ProcedureResult(id=procedure_id, title=procedure_id, path=f"docs/{procedure_id}.md", line=1, verdict=verdict,
                           reason="", duration_s=seconds, **extra)


def test_store_durations_are_the_latest_of_each_procedure_without_env_errors_or_resumed(tmp_path):
    path = tmp_path / "results.db"
    with ResultStore(path) as store:
        for run, seconds in enumerate((10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0)):
            store.start_run(f"r{run}", options={}, console="c", policy="literal")
            store.save(f"r{run}", "f", stored("a", seconds))
            store.save(f"r{run}", "f", stored("b", 500.0, Verdict.ENV_ERROR))
            store.save(f"r{run}", "f", stored("c", 1.0, resumed_from="r0"))
        # a shard's own run, saved last: not history (the next shard must see what this one saw)
        store.start_run("shard", options={"argv": [], "shard": "1/2"}, console="c", policy="literal")
        store.save("shard", "f", stored("a", 99.0))
        assert store.durations({"a", "b", "c", "d"}) == {"a": [16.0, 15.0, 14.0, 13.0, 12.0]}
        assert store.durations({"a"}, recent=2) == {"a": [16.0, 15.0]}
    ids = {"docs/a.md#a": "a", "docs/d.md#d": "d"}
    assert store_costs(path, ids) == {"docs/a.md#a": 14.0, "docs/d.md#d": 14.0}
    assert store_costs(tmp_path / "none.db", ids) is None  # no store yet: no history
    assert not (tmp_path / "none.db").exists()  # and none made


def test_balance_store_needs_the_store(tmp_path: Path):
    check_balance("hash", None)
    check_balance("store", tmp_path / "results.db")
    with pytest.raises(UsageError, match="--shard-balance store .* --no-store"):
        check_balance("store", None)
