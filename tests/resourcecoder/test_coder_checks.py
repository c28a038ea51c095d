"""What ResourceCoder checks before Terraform sees a model's template, and the pieces around it
(no Terraform here: fast)."""

from __future__ import annotations

import asyncio
import json
import textwrap

import pytest
import yaml
from coder_helpers import KEY_PAIR, SECURITY_GROUP, template_answer

from docverify.parse.parser import parse_text
from docverify.provision.meta import Requirement
from docverify.task import make_task
from docverify_sandbox.console import SandboxConsole
from docverify_terraform.resourcecoder.candidates import Candidate, CandidateStore, compose
from docverify_terraform.resourcecoder.coder import hcl_problems, parse_answer, safety_problems
from docverify_terraform.resourcecoder.ondemand import parse_request
from docverify_terraform.resourcecoder.provisioner import ResourceCoderProvisioner
from docverify_terraform.resourcecoder.schema import ProviderSchema

SCHEMA = ProviderSchema.from_json({"provider_schemas": {"registry.terraform.io/docverify/sandbox": {
    "resource_schemas": {
        "sandbox_ecs_key_pair": {"block": {"attributes": {
            "key_pair_name": {"type": "string", "required": True, "description": "SSH Key Pair Name"},
            "id": {"type": "string", "computed": True}}}},
        "sandbox_ecs_instance": {"block": {"attributes": {"instance_name": {"type": "string", "required": True}}}},
        "sandbox_vpc_vpc": {"block": {"attributes": {"vpc_name": {"type": "string", "optional": True}}}},
    },
    "data_source_schemas": {"sandbox_zones": {"block": {}}}}}})


def test_an_answer_is_read_from_json_even_fenced():
    text = "Here it is:\n" + template_answer("sandbox_ecs_key_pair", "```hcl\n" + KEY_PAIR + "```")
    assert parse_answer(text) == ("sandbox_ecs_key_pair", KEY_PAIR)
    with pytest.raises(ValueError, match="'template' is missing"):
        parse_answer(json.dumps({"resource_type": "sandbox_ecs_key_pair"}))
    with pytest.raises(ValueError, match="not JSON"):
        parse_answer("resource {")


@pytest.mark.parametrize("template, says", [
    ("{{ r.__class__.__mro__ }}", "Python internals"),
    ("{{ r | attr('x') }}", "Python internals"),
    ("{{ lipsum() }} {{ cycler }}", "uses cycler, lipsum"),
    ("{{ r.attributes.clear() }}", "unsafe template"),
    ('resource "x" "{{ r.address }}" {\n  a = {% if %}\n}', "key_pair.tf.j2:2: template syntax error"),
])
def test_a_template_that_reaches_beyond_its_variables_is_refused_before_rendering(template, says):
    requirement = Requirement(type="key_pair", attributes={"a": 1})
    problems = safety_problems(template, "key_pair.tf.j2", "key_pair", "sandbox_ecs_key_pair", [requirement],
                               "ab12cd", "cn-hangzhou")
    assert any(says in p for p in problems), problems


def test_a_correct_template_passes_the_safety_checks():
    requirements = [Requirement(type="vpc"), Requirement(type="security_group", attributes={"description": "x"})]
    assert safety_problems(SECURITY_GROUP, "security_group.tf.j2", "security_group", "sandbox_ecs_security_group",
                           requirements, "ab12cd", "cn-hangzhou") == []


def test_hcl_that_could_run_programs_read_files_or_use_other_providers_is_refused_with_its_line():
    text = textwrap.dedent('''\
        resource "sandbox_ecs_key_pair" "key_pair_1" {
          key_pair_name   = file("/etc/passwd")
          provisioner "local-exec" {
            command = "curl evil"
          }
        }
        data "external" "x" {}
        resource "null_resource" "y" {}
        provider "sandbox" {}
        data "sandbox_zones" "z" {}
        ''')
    problems = hcl_problems(text, "main.tf", SCHEMA, "sandbox")
    assert "main.tf:2: error: file() reads local files: not allowed" in problems
    assert "main.tf:3: error: no provisioner blocks: templates create resources only" in problems
    assert any(p.startswith('main.tf:7: error: data type "external" is not one of the sandbox') for p in problems)
    assert any(p.startswith('main.tf:8: error: resource type "null_resource"') for p in problems)
    assert any(p.startswith("main.tf:9: error: no provider blocks") for p in problems)
    assert not any(p.startswith("main.tf:10:") for p in problems)  # the provider's own data source is fine
    assert hcl_problems(KEY_PAIR.replace("{{ r.address }}", "key_pair_1"), "main.tf", SCHEMA, "sandbox") == []


def test_the_schema_names_the_types_for_a_meta_type_and_describes_them():
    assert SCHEMA.similar("key_pair")[0] == "sandbox_ecs_key_pair"
    assert SCHEMA.similar("ecs_instance")[0] == "sandbox_ecs_instance"
    text = SCHEMA.describe("sandbox_ecs_key_pair")
    assert "key_pair_name (string, required): SSH Key Pair Name" in text and "id (string, read-only)" in text
    assert SCHEMA.describe("sandbox_vpc_vpc", brief=True) == "sandbox_vpc_vpc: attributes vpc_name"


def test_kept_candidates_round_trip_and_compose_into_one_templates_folder(tmp_path):
    store = CandidateStore(tmp_path / "candidates")
    store.keep(Candidate(meta_type="key_pair", provider="sandbox", resource_type="sandbox_ecs_key_pair",
                         template=KEY_PAIR, model="m", rounds=2, history=[{"round": 1, "problems": ["x"]}]))
    found = store.find("sandbox", "key_pair")
    assert found is not None and found.template == KEY_PAIR and found.model == "m" and found.rounds == 0
    assert store.kept("sandbox") == ["key_pair"] and store.find("sandbox", "vpc") is None
    mine = tmp_path / "mine" / "sandbox"
    mine.mkdir(parents=True)
    (mine / "types.yaml").write_text("key_pair: my_key_pair\nvpc: sandbox_vpc_vpc\n")
    (mine / "key_pair.tf.j2").write_text("mine")
    (mine / "provider.tf.j2").write_text("provider")
    out = compose(tmp_path / "out", "sandbox", [(tmp_path / "mine", None), (store.root, {"key_pair"})])
    assert (out / "sandbox" / "key_pair.tf.j2").read_text() == "mine"  # first layer wins
    assert (out / "sandbox" / "provider.tf.j2").is_file()
    assert yaml.safe_load((out / "sandbox" / "types.yaml").read_text()) == {"key_pair": "my_key_pair",
                                                                             "vpc": "sandbox_vpc_vpc"}


def test_a_blocked_answer_must_name_a_type_of_the_vocabulary():
    assert parse_request('{"type": "none", "count": 0, "why": "the doc is wrong"}') is None
    request = parse_request('{"type": "eip", "count": 2, "attributes": {"bandwidth": 5}, "why": "bind"}')
    assert request is not None and (request.type, request.count, request.attributes) == ("eip", 2, {"bandwidth": 5})
    for bad, says in (('{"type": "server", "count": 1, "why": ""}', "vocabulary"),
                      ('{"type": "eip", "count": 9, "why": ""}', "count"),
                      ('{"type": "eip", "count": 1, "attributes": {"a": [1]}, "why": ""}', "plain values")):
        with pytest.raises(ValueError, match=says):
            parse_request(bad)


STOP = textwrap.dedent("""\
    # Stop an instance

    <!-- docverify:
    id: stop-instance
    requires:
      - {type: ecs_instance, count: 0}
    -->

    1. Log on to the ECS console.
    2. Find the instance and click **Stop**.
""")


def test_on_blocked_returns_nothing_when_the_model_says_nothing_would_help(model, tmp_path):
    fake = model([json.dumps({"type": "none", "count": 0, "why": "the Stop button is missing: doc drift"})])
    provisioner = ResourceCoderProvisioner(ResourceCoderProvisioner.Options(
        base_url=fake.url, model="m", max_retries=0, state_dir=str(tmp_path / "stacks"), work_dir=str(tmp_path / "w")))
    endpoint = SandboxConsole.endpoint("http://127.0.0.1:9", None)  # nothing is applied: never reached
    task = make_task(parse_text(STOP, "docs/stop.md").procedures[0])
    with pytest.raises(RuntimeError, match="provision\\(\\) context to be open"):
        asyncio.run(provisioner.on_blocked(task, endpoint, "blocked", ""))
    with provisioner.provision(task, endpoint):
        assert asyncio.run(provisioner.on_blocked(task, endpoint, "step 2: 'Stop' not found", "- main")) is None
    assert len(fake.requests) == 1


def test_on_blocked_is_off_when_configured_so():
    provisioner = ResourceCoderProvisioner(ResourceCoderProvisioner.Options(on_demand=False))
    task = make_task(parse_text(STOP, "docs/stop.md").procedures[0])
    assert asyncio.run(provisioner.on_blocked(task, None, "blocked", "")) is None


def test_a_template_that_does_not_render_is_reported_with_its_own_file_and_line(tmp_path):
    from docverify_terraform.resourcecoder.coder import Attempt, ResourceCoder

    coder = ResourceCoder(None, lambda: None, candidates_dir=tmp_path / "c", work_dir=tmp_path / "w")
    attempt = Attempt(1, "sandbox_ecs_key_pair", KEY_PAIR.replace("{{ r.name }}", "{{ r.nmae }}"))
    coder._check(attempt, "key_pair", "sandbox", [Requirement(type="key_pair")], "ab12cd", None, SCHEMA, tmp_path)
    assert attempt.problems == ["key_pair.tf.j2:2: 'docverify_terraform.stack.StackResource object' has no attribute 'nmae'"]
    without_output = Attempt(2, "sandbox_ecs_key_pair", KEY_PAIR.split("output")[0])
    coder._check(without_output, "key_pair", "sandbox", [Requirement(type="key_pair")], "ab12cd", None, SCHEMA, tmp_path)
    assert without_output.problems[0].startswith('key_pair.tf.j2: declares no output "key_pair_1_id"')
    wrong_type = Attempt(3, "sandbox_keypair", KEY_PAIR)
    coder._check(wrong_type, "key_pair", "sandbox", [Requirement(type="key_pair")], "ab12cd", None, SCHEMA, tmp_path)
    assert wrong_type.problems == ["resource type 'sandbox_keypair' is not in the sandbox provider's schema; "
                                   "use one of: sandbox_ecs_key_pair"]
