"""The ``oracle`` policy: a sandbox-only teacher that knows the console's releases.

- what it knows of a release: renames from the changelog, detours through the
  catalog's transitions (fast, no browser);
- it refuses a console that is not the sandbox, and a release there is none of;
- against the embedded sandbox (slow, browser): it reaches the goal of every
  procedure of ``examples/drifted`` (written for 2021-06, checked against 2026-03),
  its Thoughts name the doc's label and the page's for a renamed one, and it finishes
  a precondition task (a KMS key provisioned Disabled, a doc that says Disable) by
  enabling the key first; it deletes a bucket's objects when the console refuses
  to delete a non-empty bucket, associates the EIP with the NAT gateway that the
  doc's prerequisites say is associated, and adds the security group rule that the
  doc's prerequisites say is there before deleting it;
- what the prerequisites of stateful and precondition tasks say holds is made to hold
  before the step that needs it: an ENI or EIP bound (a reference its row action sets),
  an instance Stopped before it is released, the vSwitches of a VPC and the ENIs of a
  security group deleted before the VPC or the group.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from docverify.cli import cli
from docverify.errors import ConfigError, UsageError
from docverify.execute.actions import Observation
from docverify.parse.model import Action as DocAction
from docverify.parse.model import Procedure, Step
from docverify.parse.parser import parse_file
from docverify.plugins import installed_plugins
from docverify.task import Task
from docverify_training.oracle import (
    THOUGHT_CHARS,
    OracleDelegate,
    OraclePolicy,
    ReleaseKnowledge,
    cut,
    listing_tab,
    names_in,
)

ROOT = Path(__file__).resolve().parents[2]
DRIFTED = ROOT / "examples" / "drifted"
#: A precondition task: the key is provisioned Disabled, the doc says Disable.
DISABLE_KEY = ROOT / "benchmark" / "tasks" / "kms" / "kms-disable-key" / "kms-disable-key-1.md"
TASKS = ROOT / "benchmark" / "tasks"
#: Stateful and precondition tasks whose doc's prerequisites the environment lacks: a bucket
#: that still holds an object, an EIP not yet associated with the NAT gateway, a security
#: group without the rule the doc deletes.
PREREQUISITE_TASKS = [TASKS / "oss" / "oss-delete-bucket" / "oss-delete-bucket-1.md",
                      TASKS / "nat" / "nat-create-snat-entry" / "nat-create-snat-entry-1.md",
                      TASKS / "ecs" / "ecs-delete-security-group-rule" / "ecs-delete-security-group-rule-1.md"]
#: Tasks whose doc's prerequisites say what must hold before a step that the console would
#: refuse (or offer disabled) otherwise: the ENI and the EIP bound, the instance Stopped,
#: the VPC without vSwitches, the security group without ENIs.
RELEASE_INSTANCE = TASKS / "ecs" / "ecs-release-instance" / "ecs-release-instance-1.md"
#: ... "stop it first in **No Fees for Stopped Instances (VPC-Connected)** mode"
RELEASE_INSTANCE_NO_FEES = TASKS / "ecs" / "ecs-release-instance" / "ecs-release-instance-2.md"
UNBIND_ENI = TASKS / "ecs" / "ecs-unbind-eni" / "ecs-unbind-eni-1.md"
UNBIND_EIP = TASKS / "eip" / "eip-unbind" / "eip-unbind-1.md"
DELETE_VPC = TASKS / "vpc" / "vpc-delete-vpc" / "vpc-delete-vpc-1.md"
DELETE_SECURITY_GROUP = TASKS / "ecs" / "ecs-delete-security-group" / "ecs-delete-security-group-1.md"
#: The task's first prerequisite sentences ("contains no instances") make the META analysis
#: provision an instance into the group, which no doc step removes: left out here.
NO_INSTANCES = ("The security group contains no instances and no elastic network interfaces \\(ENIs\\). "
                "A security group that still contains an instance or an ENI cannot be deleted. ")
COMMON = ["--no-store", "--jobs", "2", "--report", "json", "--policy", "oracle"]
CLEAN_ENV = {"DOCVERIFY_CONSOLE": None, "DOCVERIFY_POLICY": None, "DOCVERIFY_CONSOLE__SANDBOX__RELEASE": None,
             "DOCVERIFY_CONFIG": None, "DOCVERIFY_JOBS": None}


# -- what it knows, without a browser -------------------------------------------------------


def test_registered_as_a_policy():
    assert installed_plugins().get("policies", "oracle") is OraclePolicy


def test_renames_come_from_the_changelog():
    known = ReleaseKnowledge("2026-03")
    assert known.renamed("Grant Permission") == ["Grant"]
    assert known.renamed("Programmatic Access") == ["OpenAPI Access"]
    assert ["Network", "Security Groups"] in known.renamed_path(["Network & Security", "Security Groups"])
    assert ReleaseKnowledge("2021-06").renamed("Grant Permission") == []  # nothing changed yet


def test_a_detour_leads_through_the_catalogs_transitions():
    known = ReleaseKnowledge("2026-03")
    target, chain, status = known.detour("Cancel Key Deletion", "key-1 Aliyun_AES_256 Enabled", "KMS")
    assert (target.resource, status) == ("key", "Enabled")
    assert [move.label for move in chain] == ["Schedule Key Deletion"]
    _, chain, _ = known.detour("Disable", "key-1 Aliyun_AES_256 Disabled", "KMS")
    assert [move.label for move in chain] == ["Enable"]
    assert known.detour("Disable", "key-1 Aliyun_AES_256 Enabled", "KMS") is None  # offered as it is


def test_new_required_fields_are_known():
    assert ("ecs", "instance", "InstanceName") in ReleaseKnowledge("2026-03").required_now()


def test_a_delete_refused_for_children_names_them_from_the_catalog():
    known = ReleaseKnowledge("2026-03")
    refused = [(delete.label, child) for delete, child in known.blocked_by(
        "BucketNotEmpty: The Bucket still has dependent resources (Files).")]
    assert refused == [("Delete Bucket", "object")]
    assert [child for _, child in known.blocked_by("DependencyViolation.VSwitch: ...")] == ["vswitch"]
    assert known.blocked_by("InvalidOperation.DeletionProtection: ...") == []
    oss, nat = known.catalog.products["oss"]["resources"], known.catalog.products["nat"]["resources"]
    assert listing_tab(oss["bucket"], oss["object"]) == "Files"
    assert listing_tab(nat["nat_gateway"], nat["snat_entry"]) == "SNAT Management"


def test_relations_come_from_the_catalogs_links():
    known = ReleaseKnowledge("2026-03")
    assert known.kind_named("NAT gateway", "NAT Gateway") == ("nat", "nat_gateway")
    assert known.kind_named("inbound rule", "ECS") == ("ecs", "security_group_rule")
    [(move, name, product, rtype)] = known.relations("nat", "nat_gateway")
    assert (move.label, name, product, rtype) == ("Associate Now", "AllocationId", "eip", "eip")
    assert known.relations("ecs", "instance") == []


def test_a_reference_an_update_sets_is_a_relation_too():
    known = ReleaseKnowledge("2026-03")
    [(move, name, product, rtype)] = known.relations("ecs", "network_interface")
    assert (move.label, name, product, rtype, move.after) == ("Bind to Instance", "InstanceId", "ecs", "instance", "InUse")
    [(move, name, product, rtype)] = known.relations("eip", "eip")
    assert (move.label, name, product, rtype) == ("Associate with Resource", "InstanceId", "ecs", "instance")


def step_of(path: Path, number: str) -> tuple[OracleDelegate, Step, DocAction]:
    """The task's delegate, its step ``number`` and that step's first action."""
    procedure = parse_file(str(path)).procedures[0]
    step = next(s for s in procedure.steps if s.number == number)
    return OracleDelegate(Task(procedure), "2026-03"), step, step.actions[0]


@pytest.mark.parametrize(("path", "number", "kind"), [(UNBIND_ENI, "3", ("ecs", "network_interface")),
                                                      (RELEASE_INSTANCE, "3", ("ecs", "instance")),
                                                      (DELETE_SECURITY_GROUP, "3", ("ecs", "security_group")),
                                                      (UNBIND_EIP, "3", ("eip", "eip")), (DELETE_VPC, "4", ("vpc", "vpc"))])
def test_the_resource_a_step_acts_on_is_the_one_its_control_and_words_name(path, number, kind):
    delegate, step, act = step_of(path, number)
    assert delegate.kind_of(step, act) == kind  # "Find the ENI `x` and click Unbind": the ENI's, not the EIP's


def test_a_relation_is_said_done_in_the_docs_own_words():
    delegate, _, _ = step_of(UNBIND_ENI, "3")
    [(bind, *_)] = delegate.known.relations("ecs", "network_interface")
    assert delegate.says_done("The secondary ENI x is bound to the instance y.", bind)
    assert delegate.says_done("The ENI x is in the In Use state.", bind)
    assert not delegate.says_done("The ENI x is created.", bind)


def test_a_status_the_prerequisites_name_is_reached_through_transitions():
    known = ReleaseKnowledge("2026-03")
    release = next(a for a in known.row_actions if (a.resource, a.label) == ("instance", "Release"))
    assert [move.label for move in known.transitions(release, "Running", ["Stopped"])] == ["Stop"]
    assert known.transitions(release, "Stopped", ["Stopped"]) == []


def test_what_keeps_a_resource_from_being_deleted_comes_from_the_catalog():
    known = ReleaseKnowledge("2026-03")
    [vswitches] = known.dependents("vpc", "vpc")
    assert (vswitches.rtype, vswitches.attr, vswitches.path, vswitches.remove.label) == (
        "vswitch", "VpcId", ["VPCs", "vSwitches"], "Delete")
    # the instances in a security group are not listed by it (the instance list has no such column)
    assert [(d.rtype, d.attr) for d in known.dependents("ecs", "security_group")] == [("network_interface", "SecurityGroupId")]
    assert known.dependents("ecs", "key_pair") == []


def test_names_are_read_from_the_docs_words():
    assert names_in("The VPC legacy-app-<suffix> still contains the vSwitch legacy-app-web-<suffix>: delete it.") == [
        "legacy-app-<suffix>", "legacy-app-web-<suffix>"]
    assert names_in("associated with the ECS instance launch-advisor-20210101, a pay-as-you-go one") == [
        "launch-advisor-20210101"]


def test_a_prerequisites_child_is_read_into_its_create_forms_values():
    procedure = parse_file(str(PREREQUISITE_TASKS[2])).procedures[0]
    delegate = OracleDelegate(Task(procedure), "2026-03")
    [sentence] = delegate.prerequisites
    assert delegate.described_values(("ecs", "security_group_rule"), sentence) == [
        ("Direction", "Inbound"), ("Policy", "Allow"), ("IpProtocol", "Custom TCP"), ("PortRange", "8080/8080"),
        ("SourceCidrIp", "10.0.0.0/8")]


def test_thoughts_are_one_short_line():
    assert len(cut("word " * 60)) <= THOUGHT_CHARS
    assert "\n" not in cut("two\nlines")


# -- refusals -------------------------------------------------------------------------------


def test_refuses_a_console_that_is_not_the_sandbox():
    delegate = OracleDelegate(Task(Procedure("p", "A procedure", "doc.md", 1, 1)))
    page = Observation(url="https://home.console.aliyun.com/", title="Alibaba Cloud Console", snapshot="")
    with pytest.raises(ConfigError) as refused:
        delegate.observe(page)
    assert "sandbox" in str(refused.value) and refused.value.hint


def test_reads_the_release_from_the_sandbox_home_page():
    delegate = OracleDelegate(Task(Procedure("p", "A procedure", "doc.md", 1, 1)))
    delegate.observe(Observation(url="http://127.0.0.1/console", title="Home - Alibaba Cloud Sandbox Console",
                                 snapshot='- paragraph "Release: 2021-06 (Console as documented in 2021)"'))
    assert delegate.known.name == "2021-06"


def test_refuses_a_release_there_is_none_of():
    with pytest.raises(UsageError):
        OraclePolicy.Options(release="1999-01")


def test_takes_its_followers_options():
    assert OraclePolicy.Options(close_threshold=0.9).follower_options.close_threshold == 0.9  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        OraclePolicy.Options(no_such_option=1)


# -- against the sandbox --------------------------------------------------------------------


def check(paths: list[Path], output: Path, browser, *options: str) -> dict:
    args = ["check", *map(str, paths), *COMMON, "--output", str(output), "--browser-path", str(browser.path), *options]
    result = CliRunner().invoke(cli, args, env=CLEAN_ENV, catch_exceptions=False)
    report = output / "docverify.json"
    assert report.exists(), f"docverify {' '.join(args)} wrote no report (exit {result.exit_code}):\n{result.output}"
    return json.loads(report.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def drifted_run(chromium, tmp_path_factory) -> dict:
    return check([DRIFTED], tmp_path_factory.mktemp("oracle-drifted"), chromium,
                 "--set", "console.sandbox.release=2026-03")


@pytest.mark.browser
@pytest.mark.slow
def test_reaches_the_goal_of_every_drifted_example(drifted_run):
    results = drifted_run["results"]
    assert len(results) == len(list(DRIFTED.glob("*.md")))
    missed = [f"{r['id']}: {r['verdict']} ({r['reason']})" for r in results if not r["goal_reached"]]
    assert not missed, "\n".join(missed)


@pytest.mark.browser
@pytest.mark.slow
def test_every_action_has_a_short_thought_and_the_oracles_say_so(drifted_run):
    turns = [turn for result in drifted_run["results"] for turn in result["turns"]]
    assert all(turn.get("thought") and len(turn["thought"]) <= THOUGHT_CHARS for turn in turns)
    assert any(turn.get("by") == "oracle" for turn in turns)


@pytest.mark.browser
@pytest.mark.slow
def test_a_renamed_labels_thought_names_both_labels(drifted_run):
    result = next(r for r in drifted_run["results"] if r["id"] == "drifted-ram-programmatic-access")
    thoughts = [turn["thought"] for turn in result["turns"] if turn.get("by") == "oracle"]
    assert any("Programmatic Access" in t and "OpenAPI Access" in t for t in thoughts), thoughts
    finding = next(f for f in result["findings"] if f["expected"] == "Programmatic Access")
    assert "OpenAPI Access" in (finding.get("resolved_by") or "")  # still drift, now saying what was done


@pytest.mark.browser
@pytest.mark.slow
def test_turns_a_disabled_key_on_before_turning_it_off(chromium, tmp_path):
    doc = tmp_path / DISABLE_KEY.name
    shutil.copy(DISABLE_KEY, doc)
    result = check([doc], tmp_path / "out", chromium, "--set", "console.sandbox.release=2026-03",
                   "--provisioner", "terraform")["results"][0]  # the key, made Disabled
    assert result["goal_reached"], f"{result['verdict']}: {result['reason']}"
    clicked = [turn["description"] for turn in result["turns"] if turn.get("by") == "oracle"]
    assert any("Enable" in described for described in clicked), clicked
    assert any(turn.get("by") == "oracle" and "Disabled" in (turn.get("thought") or "") for turn in result["turns"])


@pytest.fixture(scope="module")
def prerequisite_run(chromium, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("oracle-prerequisites")
    docs = []
    for task in PREREQUISITE_TASKS:
        docs.append(folder / task.name)
        shutil.copy(task, docs[-1])
    report = check(docs, folder / "out", chromium, "--set", "console.sandbox.release=2026-03",
                   "--provisioner", "terraform")
    return {result["id"]: result for result in report["results"]}


def oracle_turns(result: dict) -> list[str]:
    return [turn["description"] for turn in result["turns"] if turn.get("by") == "oracle"]


@pytest.mark.browser
@pytest.mark.slow
def test_deletes_the_objects_of_a_bucket_the_console_refuses_to_delete(prerequisite_run):
    result = prerequisite_run["oss-delete-bucket-1"]
    assert result["goal_reached"], f"{result['verdict']}: {result['reason']}"
    clicked = [d for d in oracle_turns(result) if d.startswith("click")]
    assert clicked.index("click tab 'Files'") < clicked.index("click button 'Delete'") \
        < clicked.index("click button 'Delete Bucket'"), clicked
    finding = next(f for f in result["findings"] if "BucketNotEmpty" in f["observed"])
    assert "object" in (finding.get("resolved_by") or "")


@pytest.mark.browser
@pytest.mark.slow
def test_associates_the_eip_the_prerequisites_name_before_the_snat_entry(prerequisite_run):
    result = prerequisite_run["nat-create-snat-entry-1"]
    assert result["goal_reached"], f"{result['verdict']}: {result['reason']}"
    described = [turn["description"] for turn in result["turns"]]
    associate = next(i for i, d in enumerate(described) if "Associate Now" in d)
    assert associate < next(i for i, d in enumerate(described) if "Create SNAT Entry" in d)


@pytest.mark.browser
@pytest.mark.slow
def test_adds_the_rule_the_prerequisites_describe_before_deleting_it(prerequisite_run):
    result = prerequisite_run["ecs-delete-security-group-rule-1"]
    assert result["goal_reached"], f"{result['verdict']}: {result['reason']}"
    done = oracle_turns(result)
    assert any("Add Security Group Rule" in d for d in done), done
    assert any("8080/8080" in d for d in done) and any("10.0.0.0/8" in d for d in done), done


@pytest.fixture(scope="module")
def stateful_run(chromium, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("oracle-stateful")
    docs = []
    for task in (RELEASE_INSTANCE, RELEASE_INSTANCE_NO_FEES, UNBIND_ENI, UNBIND_EIP, DELETE_VPC):
        docs.append(folder / task.name)
        shutil.copy(task, docs[-1])
    text = DELETE_SECURITY_GROUP.read_text(encoding="utf-8")
    assert NO_INSTANCES in text
    docs.append(folder / DELETE_SECURITY_GROUP.name)
    docs[-1].write_text(text.replace(NO_INSTANCES, ""), encoding="utf-8")
    report = check(docs, folder / "out", chromium, "--set", "console.sandbox.release=2026-03",
                   "--provisioner", "terraform")
    return {result["id"]: result for result in report["results"]}


def before(done: list[str], first: str, then: str) -> bool:
    """Whether an action described with ``first`` comes before one described with ``then``."""
    return next(i for i, d in enumerate(done) if first in d) < next(i for i, d in enumerate(done) if then in d)


@pytest.mark.browser
@pytest.mark.slow
def test_stops_the_instance_the_prerequisites_say_is_stopped_before_releasing_it(stateful_run):
    result = stateful_run["ecs-release-instance-1"]
    assert result["goal_reached"], f"{result['verdict']}: {result['reason']}"
    described = [turn["description"] for turn in result["turns"]]
    assert before(described, "menuitem 'Stop'", "menuitem 'Release'"), described
    assert not result["findings"]  # the doc said so: nothing refused, nothing to flag


@pytest.mark.browser
@pytest.mark.slow
def test_stops_it_in_the_mode_the_prerequisites_name(stateful_run):
    result = stateful_run["ecs-release-instance-2"]  # its audit event must say StoppedMode: StopCharging
    assert result["goal_reached"], f"{result['verdict']}: {result['reason']}"
    described = [turn["description"] for turn in result["turns"]]
    assert before(described, "No Fees for Stopped Instances", "button 'OK'"), described


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize(("task", "bind"), [("ecs-unbind-eni-1", "Bind to Instance"),
                                            ("eip-unbind-1", "Associate with Resource")])
def test_binds_what_the_prerequisites_say_is_bound_before_unbinding_it(stateful_run, task, bind):
    result = stateful_run[task]
    assert result["goal_reached"], f"{result['verdict']}: {result['reason']}"
    described = [turn["description"] for turn in result["turns"]]
    assert before(described, bind, "button 'Unbind'"), described
    chosen = next(d for d in described if d.startswith("select"))
    assert ("bastion-" if task.startswith("ecs") else "launch-advisor-20210101") in chosen  # the one the doc names


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize(("task", "dependent", "delete"), [("vpc-delete-vpc-1", "link 'vSwitches'", "button 'Delete'"),
                                                           ("ecs-delete-security-group-1", "link 'ENIs'", "menuitem 'Delete'")])
def test_deletes_what_the_prerequisites_say_must_go_first(stateful_run, task, dependent, delete):
    result = stateful_run[task]
    assert result["goal_reached"], f"{result['verdict']}: {result['reason']}"
    done = oracle_turns(result)
    assert done[0] == f"click {dependent}" and f"click {delete}" in done, done
    assert not result["findings"]
