"""ResourceCoder writes a template with a (fake, loopback) model: validated by real Terraform
against the sandbox, repaired from the diagnostics it is shown, kept — or a clear error."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from coder_helpers import KEY_PAIR, KEY_PAIR_MISSPELT, SECURITY_GROUP, template_answer, user_text

from docverify.errors import EnvironmentProblem
from docverify_terraform.resourcecoder.coder import ResourceCoder, TemplateWriteFailed, backend_from_options
from docverify_terraform.resourcecoder.provisioner import ResourceCoderProvisioner
from docverify_terraform.stack import render_stack

pytestmark = [pytest.mark.terraform, pytest.mark.slow]


def make_coder(terraform, model, tmp_path, **kw) -> ResourceCoder:
    options = ResourceCoderProvisioner.Options(base_url=model.url, model="fake-coder", max_retries=0)
    return ResourceCoder(terraform, backend_from_options(options), candidates_dir=tmp_path / "candidates",
                         work_dir=tmp_path / "work", **kw)


def key_pairs(api) -> set[str]:
    data = api.call("DescribeKeyPairs", "2014-05-26", {"RegionId": "cn-hangzhou", "PageSize": "100"})
    return {k["KeyPairName"] for k in data["KeyPairs"]["KeyPair"]}


def test_a_template_written_and_validated_in_one_round_is_kept_as_a_candidate(terraform, model, tmp_path):
    fake = model([template_answer("sandbox_ecs_security_group", SECURITY_GROUP)])
    coder = make_coder(terraform, fake, tmp_path)

    candidate = coder.write_template("security_group", "sandbox", attributes={"description": "web"},
                                     dependencies=["vpc"])

    assert candidate.rounds == 1 and candidate.resource_type == "sandbox_ecs_security_group"
    assert candidate.validation["plan"] == {"add": 2, "change": 0, "destroy": 0}  # its VPC, and itself
    assert candidate.usage.calls == 1 and candidate.usage.tokens_in == 1200 and candidate.usage.tokens_out == 150
    kept = tmp_path / "candidates" / "sandbox"
    assert (kept / "security_group.tf.j2").read_text() == SECURITY_GROUP
    record = json.loads((kept / "security_group.json").read_text())
    assert record["model"] == "fake-coder" and record["rounds"] == 1 and record["usage"]["calls"] == 1
    assert 'resource "sandbox_ecs_security_group" "security_group_1"' in record["validation"]["main_tf"]
    assert yaml.safe_load((kept / "types.yaml").read_text()) == {"security_group": "sandbox_ecs_security_group"}
    # the model was shown the provider's real schema, the dependency's address, the attributes
    prompt = user_text(fake.requests[0])
    assert "security_group_name (string, optional)" in prompt
    assert 'ref("vpc")` -> `sandbox_vpc_vpc.vpc_1`' in prompt and '{"description": "web"}' in prompt
    # a --templates folder: the real renderer uses the candidate
    from docverify.provision.meta import Requirement, close

    spec = render_stack(close([Requirement(type="security_group")]), "sandbox", suffix="zz9",
                        templates=tmp_path / "candidates")
    assert "Written by ResourceCoder" in spec.files["main.tf"]
    # kept: asked again, no model call
    assert coder.write_template("security_group", "sandbox").rounds == 0 and len(fake.requests) == 1
    assert not list((tmp_path / "work" / "resourcecoder").iterdir())  # the scratch stack is gone


def test_a_broken_template_is_repaired_from_the_validate_diagnostics_it_was_shown(terraform, model, tmp_path):
    fake = model([template_answer("sandbox_ecs_key_pair", KEY_PAIR_MISSPELT),
                  template_answer("sandbox_ecs_key_pair", KEY_PAIR)])
    coder = make_coder(terraform, fake, tmp_path)

    candidate = coder.write_template("key_pair", "sandbox")

    assert candidate.rounds == 2 and len(fake.requests) == 2
    repair = fake.requests[1]["messages"]
    assert repair[2] == {"role": "assistant", "content": template_answer("sandbox_ecs_key_pair", KEY_PAIR_MISSPELT)}
    shown = repair[3]["content"]
    found = re.search(r"main\.tf:(\d+): error: Unsupported argument: An argument named \"key_pair_nmae\"", shown)
    assert found, shown
    listing = {int(n): text for n, text in re.findall(r"^\s*(\d+)  (.*)$", shown, re.M)}
    assert "key_pair_nmae" in listing[int(found.group(1))]  # the numbered main.tf points at the same line
    assert "Missing required argument" in shown
    assert candidate.history[0]["problems"] and candidate.history[1]["problems"] == []
    assert (tmp_path / "candidates" / "sandbox" / "key_pair.tf.j2").read_text() == KEY_PAIR


def test_a_model_that_never_fixes_it_is_a_clear_error_and_leaves_nothing(terraform, model, tmp_path, api):
    before = key_pairs(api)
    fake = model([template_answer("sandbox_ecs_key_pair", KEY_PAIR_MISSPELT)] * 2)
    coder = make_coder(terraform, fake, tmp_path, max_rounds=2)

    with pytest.raises(TemplateWriteFailed) as raised:
        coder.write_template("key_pair", "sandbox")

    error = raised.value
    assert isinstance(error, EnvironmentProblem) and error.rounds == 2
    assert "could not write a 'sandbox' template for key_pair in 2 rounds" in str(error)
    assert re.search(r"main\.tf:\d+: error: Unsupported argument", str(error))
    assert "raise max_rounds" in str(error)
    assert len(fake.requests) == 2
    assert not (tmp_path / "candidates" / "sandbox" / "key_pair.tf.j2").exists()
    assert key_pairs(api) == before  # validate and plan create nothing

