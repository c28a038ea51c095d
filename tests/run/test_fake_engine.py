"""The ``fake`` model engine (tests/fake_plugins.py), asked for by name as plugins ask for
engines: scripted replies, what the model was shown, tokens counted the same every time.

Where a plugin takes an engine it made itself (the judges, a model policy) the fake goes
in as that engine; ResourceCoder gets it from ``get_engine("fake")`` through its backend
factory, with a stand-in Terraform (no binary, no provider)."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import fake_plugins
import pytest
from fake_plugins import URL, FakeEngine, ScriptExhausted, text_tokens
from sandbox_templates import KEY_PAIR

from docverify.check.checker import Evidence
from docverify.check.criteria import ExpectedEvent
from docverify.check.verdict import Verdict
from docverify.console import ConsoleEndpoint
from docverify.engines import EndpointOptions, estimate_tokens, get_engine
from docverify.errors import PluginError, Undecided
from docverify.execute.actions import Observation
from docverify.parse.parser import parse_text
from docverify.task import make_task

DOC = """\
    # Create a bucket

    1. In the left-side navigation pane, click **Buckets**.
    2. On the Buckets page, click **Create Bucket**.
"""

ENDPOINT = ConsoleEndpoint(url=URL, api_url="", audit_url="", home=URL + "/")


def task(title: str = "Create a bucket"):
    return make_task(parse_text(textwrap.dedent(DOC.replace("Create a bucket", title)), "docs/bucket.md")
                     .procedures[0], suffix="t0")


def ask(engine, messages, schema=None, name="test"):
    return asyncio.run(engine.complete(messages, schema or {"type": "object"}, name=name, max_tokens=100,
                                       temperature=0.0))


# -- the engine itself ---------------------------------------------------------------------


def test_the_fake_engine_is_found_by_name_like_the_built_in_ones(installed_fakes):
    engine_class = get_engine("fake")
    assert engine_class is FakeEngine
    made = engine_class.from_endpoint(EndpointOptions(model="judge-7b"))  # as a plugin with endpoint options makes one
    assert made.model == "judge-7b" and made.local and fake_plugins.ENGINES == [made]
    with pytest.raises(PluginError, match="fake"):  # the installed engines are listed, the fake among them
        get_engine("fkae")


def test_replies_come_in_order_and_every_call_is_recorded(installed_fakes):
    engine = get_engine("fake")(['{"success": true}', {"success": False, "reasons": "no row"}])
    schema = {"type": "object", "properties": {"success": {"type": "boolean"}}}
    messages = [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Was the bucket made?"}]

    first = ask(engine, messages, schema, name="judge_verdict")
    messages.append({"role": "user", "content": "Again?"})  # the caller's list changes later: the record does not
    second = ask(engine, messages)

    assert first.text == '{"success": true}'
    assert json.loads(second.text) == {"success": False, "reasons": "no row"}
    [call, _] = engine.calls
    assert call.name == "judge_verdict" and call.schema == schema and call.max_tokens == 100
    assert call.messages == messages[:2] and call.user == "Was the bucket made?"
    assert engine.calls[1].user == "Again?"


def test_tokens_are_counted_the_same_way_every_time(installed_fakes):
    messages = [{"role": "user", "content": "x" * 350}]
    answers = [ask(FakeEngine(["a" * 10]), messages) for _ in range(2)]
    assert [(a.tokens_in, a.tokens_out) for a in answers] == [(112, 3), (112, 3)]  # 350 / 3.5 + 4 + 8; 10 / 4
    assert answers[0].tokens_in == estimate_tokens(messages) and answers[0].tokens_out == text_tokens("a" * 10)


def test_an_exhausted_script_fails_loudly_naming_what_was_asked(installed_fakes):
    engine = FakeEngine([{"ok": True}])
    ask(engine, [{"role": "user", "content": "first"}])
    with pytest.raises(ScriptExhausted, match=r"no reply left for call 2 \(agent_action\); it was asked: 'Click OK\?'"):
        ask(engine, [{"role": "user", "content": "Click OK?"}], name="agent_action")


def test_a_reply_can_be_an_error_or_depend_on_the_call(installed_fakes):
    engine = FakeEngine([Undecided("rate limited"), lambda call: {"echo": call.user}])
    with pytest.raises(Undecided, match="rate limited"):
        ask(engine, [{"role": "user", "content": "one"}])
    assert json.loads(ask(engine, [{"role": "user", "content": "two"}]).text) == {"echo": "two"}


def test_engines_made_by_name_share_the_queue_the_test_scripted(installed_fakes):
    fake_plugins.REPLIES.extend(['{"n": 1}', '{"n": 2}'])
    first, second = (get_engine("fake").from_endpoint(EndpointOptions(model=m)) for m in ("a", "b"))
    assert [ask(first, [{"role": "user", "content": "?"}]).text,
            ask(second, [{"role": "user", "content": "?"}]).text] == ['{"n": 1}', '{"n": 2}']
    assert [e.model for e in fake_plugins.ENGINES] == ["a", "b"] and fake_plugins.REPLIES == []


# -- the judges --------------------------------------------------------------------------


def judges(first: FakeEngine, second: FakeEngine):
    """The judges checker with two fake engines, asked for by name (``engine = "fake"``)
    as a user's configuration would; each takes the replies its engine was scripted with."""
    from docverify_models.judges import JudgesChecker

    checker = JudgesChecker(JudgesChecker.Options(first={"engine": "fake", "model": first.model},
                                                  second={"engine": "fake", "model": second.model}))
    checker.prepare()
    made = fake_plugins.ENGINES[-2:]
    assert [type(e) for e in made] == [FakeEngine, FakeEngine] and [e.model for e in made] == [first.model, second.model]
    for engine, scripted in zip(made, (first, second)):
        engine.replies = scripted.replies
        scripted.calls = engine.calls  # the test reads what the engine it scripted was asked
    return checker


def evidence() -> Evidence:
    final = Observation(url=URL + "/done", title="Buckets", snapshot='- row "docs-t0 Standard" [ref=e1]')
    return Evidence(task(), [], ENDPOINT, 0.0, 1.0, [], final)


def test_two_judges_that_agree_decide_and_an_unusable_answer_is_asked_again(installed_fakes):
    from docverify_models.judges import verdict_schema

    first = FakeEngine([{"success": True, "reasons": "the row docs-t0 is listed"}], model="judge-a")
    second = FakeEngine(["I think so", {"success": True, "reasons": "bucket shown"}], model="judge-b")

    result = asyncio.run(judges(first, second).check(evidence()))

    assert result.goal_reached is True and result.reason.startswith("both judges: goal reached")
    assert [r["model"] for r in result.evidence] == ["judge-a", "judge-b"]
    [asked] = first.calls
    assert asked.name == "judge_verdict" and asked.schema == verdict_schema(FakeEngine.max_text)
    assert "Create a bucket" in asked.user and 'row "docs-t0 Standard"' in asked.user  # the goal, the final page
    retry = second.calls[1].messages
    assert retry[-2] == {"role": "assistant", "content": "I think so"}
    assert retry[-1]["content"].startswith("That answer cannot be used (it is not JSON)")
    usage = result.usage
    assert (usage.calls, usage.invalid_outputs) == (3, 1)
    calls = first.calls + second.calls
    assert usage.tokens_in == sum(estimate_tokens(c.messages) for c in calls)
    assert usage.tokens_out == sum(text_tokens(t) for t in (json.dumps({"success": True, "reasons": "the row docs-t0 is listed"}),
                                                            "I think so", json.dumps({"success": True, "reasons": "bucket shown"})))


def test_judges_that_disagree_or_cannot_answer_leave_it_undecided(installed_fakes):
    result = asyncio.run(judges(FakeEngine([{"success": True, "reasons": "shown"}]),
                                FakeEngine([{"success": False, "reasons": "not shown"}])).check(evidence()))
    assert result.goal_reached is None and result.reason.startswith("judges disagree")

    result = asyncio.run(judges(FakeEngine([{"success": True, "reasons": "shown"}]),
                                FakeEngine([Undecided("the endpoint is down")])).check(evidence()))
    assert result.goal_reached is None and "no answer — the endpoint is down" in result.reason


# -- a model policy on the fake console ------------------------------------------------------


def test_a_model_policy_acts_on_the_page_it_was_shown(installed_fakes, tmp_path, monkeypatch):
    """The agent's model sees the fake page's refs; an answer naming a ref the page lacks
    is shown its problem and asked again; the run gives the verdict."""
    from docverify.run.runner import RunLimits, Runner, Stages
    from docverify_models.policies import OpenAIPolicy
    from docverify_none import NoneProvisioner

    monkeypatch.setattr(fake_plugins, "SITE", {
        "/": ("Overview", [("link", "Buckets", "/buckets")]),
        "/buckets": ("Buckets", [("button", "Create Bucket", "/done")]),
        "/done": ("Bucket created", []),
    })
    engine = FakeEngine([
        {"thought": "open the list", "action": "click", "ref": "e9", "step": "1"},  # not on the page
        {"thought": "open the list", "action": "click", "ref": "e1", "step": "1"},
        {"thought": "create it", "action": "click", "ref": "e1", "step": "2"},
        {"thought": "created", "action": "done", "status": "success", "message": "created"},
    ])
    policy = OpenAIPolicy(OpenAIPolicy.Options(model="fake-model"))
    policy.backend = engine  # the policy makes its engine from its options (openai): there is no engine name
    checker = fake_plugins.AnswerChecker()
    made = task()
    made.criteria = [ExpectedEvent("PutBucket", "Oss")]  # the answer checker decides tasks with criteria
    stages = Stages(NoneProvisioner(), fake_plugins.FakeExecutor(), policy, [checker])
    runner = Runner(stages, ENDPOINT, artifacts=tmp_path / "artifacts", limits=RunLimits(), output=tmp_path)
    [result] = asyncio.run(runner.run([made], 1))

    assert result.verdict is Verdict.PASS, result.reason
    assert [t.description for t in result.turns if t.ok] == ["click link 'Buckets'", "click button 'Create Bucket'"]
    first, retry = engine.calls[0], engine.calls[1]
    assert '- link "Buckets" [ref=e1]' in first.user and first.name == "agent_action"
    assert "e9" in retry.user and retry.messages[-2]["role"] == "assistant"
    assert '- button "Create Bucket" [ref=e1]' in engine.calls[2].user  # the next page, after the click
    assert result.usage.calls == 4 and result.usage.invalid_outputs == 1
    assert checker.evidence["Create a bucket"].final.url == URL + "/done"


# -- ResourceCoder -----------------------------------------------------------------------------

SCHEMA = {"provider_schemas": {"registry.terraform.io/docverify/sandbox": {
    "resource_schemas": {
        "sandbox_ecs_key_pair": {"block": {"attributes": {
            "key_pair_name": {"type": "string", "optional": True, "description": "SSH Key Pair Name"},
            "region_id": {"type": "string", "optional": True},
            "id": {"type": "string", "computed": True}}}},
        "sandbox_vpc_vpc": {"block": {"attributes": {"vpc_name": {"type": "string", "optional": True}}}},
    },
    "data_source_schemas": {}}}}

class StandInStack:
    """What ResourceCoder asks of a stack: files written, init, the providers' schema, validate, plan."""

    def __init__(self, terraform: "StandInTerraform", workdir: Path) -> None:
        self.terraform, self.workdir = terraform, workdir
        self.log_path = workdir / "terraform.log"

    def write(self, files: dict[str, str]) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (self.workdir / name).write_text(text)
        self.terraform.written.append(dict(files))

    def init(self) -> None:
        pass

    def validate(self):
        return SimpleNamespace(valid=True, diagnostics=[], errors=[])

    def plan(self):
        return SimpleNamespace(add=1, change=0, remove=0)


class StandInTerraform:
    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir  # ResourceCoder keeps provider schemas per cache
        self.written: list[dict[str, str]] = []

    def stack(self, workdir: Path) -> StandInStack:
        return StandInStack(self, workdir)

    def run(self, workdir, args, *, timeout, log):
        assert args == ("providers", "schema", "-json")
        return SimpleNamespace(returncode=0, stdout=json.dumps(SCHEMA))


def test_resourcecoder_repairs_a_template_from_what_it_showed_the_engine(installed_fakes, tmp_path):
    from docverify_terraform.resourcecoder.coder import ANSWER_SCHEMA, ResourceCoder

    wrong = {"resource_type": "sandbox_ecs_keypair", "template": KEY_PAIR.replace("ecs_key_pair", "ecs_keypair")}
    right = {"resource_type": "sandbox_ecs_key_pair", "template": KEY_PAIR}
    engine = get_engine("fake")([wrong, right], model="fake-coder")
    terraform = StandInTerraform(tmp_path / "cache")
    coder = ResourceCoder(terraform, lambda: engine, candidates_dir=tmp_path / "candidates",
                          work_dir=tmp_path / "work")

    candidate = coder.write_template("key_pair", "sandbox", force=True)

    assert candidate.rounds == 2 and candidate.resource_type == "sandbox_ecs_key_pair" and candidate.model == "fake-coder"
    assert (tmp_path / "candidates" / "sandbox" / "key_pair.tf.j2").read_text() == KEY_PAIR
    first, repair = engine.calls
    assert first.name == "terraform_template" and first.schema == ANSWER_SCHEMA
    assert "key_pair_name (string, optional)" in first.user  # the provider's schema, as the engine saw it
    assert repair.messages[2] == {"role": "assistant", "content": json.dumps(wrong)}
    assert "resource type 'sandbox_ecs_keypair' is not in the sandbox provider's schema" in repair.user
    assert 'resource "sandbox_ecs_key_pair" "key_pair_1"' in terraform.written[-1]["main.tf"]
    usage = candidate.usage
    assert usage.calls == 2 and usage.tokens_in == sum(estimate_tokens(c.messages) for c in engine.calls)
    assert usage.tokens_out == text_tokens(json.dumps(wrong)) + text_tokens(json.dumps(right))
    assert engine.closed  # the backend made for this write is closed after it
