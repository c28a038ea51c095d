"""The official ActionTrail SDK (and the generic Tea OpenAPI client) against a live sandbox."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sandbox_helpers import sdk_config

ECS = "2014-05-26"


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def lookup(trail_client, **kw):
    from alibabacloud_actiontrail20200706 import models

    return trail_client.lookup_events(models.LookupEventsRequest(**kw)).body


def attr(key, value):
    from alibabacloud_actiontrail20200706 import models

    return models.LookupEventsRequestLookupAttribute(key=key, value=value)


def test_lookup_events_filters_and_paging(client, trail_client, account):
    vpc = client.call("CreateVpc", "2016-04-28", {"RegionId": "cn-hangzhou", "CidrBlock": "10.0.0.0/8",
                                                  "VpcName": "audited"})["VpcId"]
    for _ in range(3):
        client.call("DescribeVpcs", "2016-04-28", {"RegionId": "cn-hangzhou"})
    now = datetime.now(timezone.utc)
    window = dict(start_time=iso(now - timedelta(minutes=5)), end_time=iso(now + timedelta(minutes=1)))

    body = lookup(trail_client, lookup_attribute=[attr("EventName", "CreateVpc")], **window)
    events = [e for e in body.events if e["resourceName"] == vpc]
    assert len(events) == 1
    ev = events[0]
    assert ev["eventType"] == "ApiCall" and ev["eventRW"] == "Write" and ev["serviceName"] == "Vpc"
    assert ev["userIdentity"]["type"] == "ram-user" and ev["userIdentity"]["userName"] == account.admin_user
    assert ev["userIdentity"]["accountId"] == account.account_id
    assert ev["referencedResources"] == {"ACS::VPC::VPC": [vpc]}
    assert ev["responseElements"]["VpcId"] == vpc and ev["acsRegion"] == "cn-hangzhou"

    by_name = lookup(trail_client, lookup_attribute=[attr("ResourceName", vpc)], **window)
    assert {e["eventName"] for e in by_name.events} == {"CreateVpc"}
    by_id = lookup(trail_client, lookup_attribute=[attr("EventId", ev["eventId"])], **window)
    assert [e["eventId"] for e in by_id.events] == [ev["eventId"]]
    reads = lookup(trail_client, lookup_attribute=[attr("ServiceName", "Vpc"), attr("EventRW", "Read")], **window)
    assert reads.events and all(e["eventRW"] == "Read" for e in reads.events)
    by_user = lookup(trail_client, lookup_attribute=[attr("User", account.admin_user)], **window)
    assert by_user.events

    # paging: 2 per page, BACKWARD (newest first) and FORWARD
    seen, token = [], None
    for _ in range(10):
        page = lookup(trail_client, max_results="2", next_token=token,
                      lookup_attribute=[attr("EventName", "DescribeVpcs")], **window)
        seen.extend(e["eventId"] for e in page.events)
        token = page.next_token
        if not token:
            break
    assert len(seen) == len(set(seen)) >= 3
    forward = lookup(trail_client, max_results="50", direction="FORWARD",
                     lookup_attribute=[attr("EventName", "DescribeVpcs")], **window)
    assert [e["eventId"] for e in forward.events] == list(reversed(seen))


def test_failures_are_audited(client, trail_client):
    from docverify_sandbox.client import SandboxApiError

    with pytest.raises(SandboxApiError):
        client.call("StartInstance", ECS, {"RegionId": "cn-hangzhou", "InstanceId": "i-bp1missing000000000"})
    body = lookup(trail_client, lookup_attribute=[attr("ResourceName", "i-bp1missing000000000")])
    assert body.events[0]["errorCode"] == "InvalidInstanceId.NotFound"


def test_lookup_is_scoped_to_the_callers_account(sandbox, client, other_account):
    from alibabacloud_actiontrail20200706.client import Client

    vpc = client.call("CreateVpc", "2016-04-28", {"RegionId": "cn-hangzhou", "CidrBlock": "10.0.0.0/8"})["VpcId"]
    other = Client(sdk_config(sandbox, other_account.admin_access_key_id, other_account.admin_access_key_secret))
    assert lookup(other, lookup_attribute=[attr("ResourceName", vpc)]).events == []


def test_sdk_forged_secret_is_rejected(sandbox, account):
    from alibabacloud_actiontrail20200706.client import Client
    from alibabacloud_tea_openapi.exceptions import ClientException

    bad = Client(sdk_config(sandbox, account.admin_access_key_id, "forged"))
    with pytest.raises(ClientException) as info:
        lookup(bad)
    assert info.value.code == "SignatureDoesNotMatch"
    bad_v2 = Client(sdk_config(sandbox, account.admin_access_key_id, "forged", signature_algorithm="v2"))
    with pytest.raises(ClientException) as info:
        lookup(bad_v2)
    assert info.value.code == "SignatureDoesNotMatch"


@pytest.mark.parametrize("algorithm", [None, "v2"], ids=["ACS3-HMAC-SHA256", "v2-HMAC-SHA1"])
def test_generic_openapi_client_both_signatures(sandbox, account, algorithm):
    """Any RPC action through the official Tea OpenAPI client, signed both ways."""
    from alibabacloud_tea_openapi import utils_models
    from alibabacloud_tea_openapi.client import Client
    from darabonba.runtime import RuntimeOptions

    kw = {"signature_algorithm": algorithm} if algorithm else {}
    c = Client(sdk_config(sandbox, account.admin_access_key_id, account.admin_access_key_secret, **kw))
    params = utils_models.Params(action="DescribeSecurityGroups", version=ECS, protocol="HTTP", pathname="/",
                                 method="POST", auth_type="AK", style="RPC", req_body_type="formData",
                                 body_type="json")
    req = utils_models.OpenApiRequest(query={"RegionId": "cn-hangzhou"})
    out = c.call_api(params, req, RuntimeOptions())
    assert out["statusCode"] == 200
    assert out["body"]["SecurityGroups"]["SecurityGroup"]
