"""ActionTrail events: how an operation is recorded, and LookupEvents.

Events are shaped like the real management events in the corpus
(``corpus/actiontrail/events``): eventId, eventVersion, eventName, eventType
(ApiCall, ConsoleOperation, ConsoleSignin), eventRW, eventSource, eventTime,
serviceName, acsRegion, requestParameters, responseElements, resourceName,
resourceType, referencedResources, userIdentity, userAgent, sourceIpAddress,
and errorCode/errorMessage on failure.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from docverify_sandbox.errors import ApiError, invalid

if TYPE_CHECKING:
    from docverify_sandbox.catalog import Catalog
    from docverify_sandbox.state import Store

SECRET_PARAMS = {"Password", "AccountPassword", "AccessKeySecret", "Signature", "PublicKeyBody", "Content"}
LOOKUP_KEYS = {
    "EventName": "event_name", "ServiceName": "service_name", "ResourceName": "resource_name",
    "ResourceType": "resource_type", "EventRW": "event_rw", "User": "user_name", "EventId": "event_id",
    "EventAccessKeyId": "access_key_id", "EventType": "event_type",
}


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str, name: str) -> float:

    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%MZ"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            continue
    raise invalid(name, None, "Use the UTC format yyyy-MM-ddTHH:mm:ssZ.")


def build_event(*, product: dict[str, Any], catalog: "Catalog", action: str, rw: str, caller, params: dict[str, str],
                response: dict[str, Any] | None, error, touched: list[dict[str, Any]], region: str,
                request_id: str, when: float, subject: tuple[dict[str, Any], str] | None = None) -> dict[str, Any]:
    """One ActionTrail event for an operation (success or failure). ``subject`` is the
    operation's own resource type and the parameter that names it: what a call that
    failed before touching anything is recorded against, when the call names one."""
    req = {k: ("******" if k in SECRET_PARAMS else v) for k, v in params.items()
           if k not in ("Signature", "SignatureNonce", "SignatureMethod", "SignatureVersion", "Timestamp",
                        "Format", "AccessKeyId", "Version", "Action")}
    region_name = region if region and region != "global" else "cn-hangzhou"
    req.setdefault("RegionId", region_name)
    req["AcsProduct"] = product["service_name"]
    referenced: dict[str, list[str]] = {}
    names: list[str] = []
    types: list[str] = []
    for t in touched:
        rtype = catalog.resource(t["product"], t["rtype"])["resource_type"]
        referenced.setdefault(rtype, []).append(t["id"])
        names.append(t["id"])
        if rtype not in types:
            types.append(rtype)
    if not touched:
        candidates = [subject] if subject and subject[0].get("audit_as") != "parent" else []
        candidates += [(res, res["id_param"]) for res in product.get("resources", {}).values()]
        for res, id_param in candidates:
            ident = params.get(id_param)
            if ident and id_param not in ("Name",):
                referenced.setdefault(res["resource_type"], []).append(ident)
                names.append(ident)
                types.append(res["resource_type"])
                break
    identity = {k: v for k, v in caller.identity.items() if v is not None}
    if caller.channel == "console":
        identity.pop("accessKeyId", None)
        identity["sessionContext"] = {"attributes": {"mfaAuthenticated": "false", "creationDate": iso(when)}}
    event: dict[str, Any] = {
        "eventId": str(uuid.uuid4()).upper(),
        "eventVersion": "1",
        "eventCategory": "Management",
        "eventName": action,
        "eventType": "ApiCall" if caller.channel == "api" else "ConsoleOperation",
        "eventRW": rw,
        "eventSource": product["event_source"],
        "eventTime": iso(when),
        "serviceName": product["service_name"],
        "acsRegion": region_name,
        "apiVersion": product["api_version"],
        "isGlobal": not product.get("regional", True),
        "requestId": request_id,
        "requestParameters": req,
        "responseElements": _response_elements(response),
        "referencedResources": referenced,
        "resourceName": ",".join(names),
        "resourceType": ";".join(types),
        "sourceIpAddress": caller.source_ip,
        "userAgent": caller.user_agent or (product["user_agent"] if caller.channel == "console" else "sandbox-sdk"),
        "userIdentity": identity,
        "recipientAccountId": caller.account_id,
    }
    if error is not None:
        event["errorCode"] = error.code
        event["errorMessage"] = error.message
    return event


def _response_elements(response: dict[str, Any] | None) -> dict[str, Any]:
    if not response:
        return {}
    out = {}
    for k, v in response.items():
        if k in ("AccessKey",) and isinstance(v, dict):
            v = {kk: vv for kk, vv in v.items() if kk != "AccessKeySecret"}
        if k == "PrivateKeyBody":
            continue
        out[k] = v
    text = json.dumps(out)
    return out if len(text) < 8000 else {"RequestId": response.get("RequestId")}


def signin_event(account_id: str, identity: dict[str, Any], *, ok: bool, url: str, ip: str, user_agent: str,
                 login_account: str) -> dict[str, Any]:
    now = time.time()
    event = {
        "eventId": str(uuid.uuid4()).upper(),
        "eventVersion": "1",
        "eventCategory": "Management",
        "eventName": "ConsoleSignin",
        "eventType": "ConsoleSignin",
        "eventRW": "Write",
        "eventSource": url,
        "eventTime": iso(now),
        "serviceName": "AasSub" if identity.get("type") == "ram-user" else "Aas",
        "acsRegion": "cn-hangzhou",
        "requestParameters": {},
        "responseElements": {"LoginResult": "success" if ok else "fail"},
        "resourceName": "",
        "resourceType": "",
        "referencedResources": {},
        "sourceIpAddress": ip,
        "userAgent": user_agent,
        "userIdentity": identity,
        "additionalEventData": {"loginAccount": login_account, "isMFAChecked": "false"},
        "recipientAccountId": account_id,
    }
    if not ok:
        event["errorCode"] = "InvalidPassword"
        event["errorMessage"] = "The user name or password is incorrect."
    return event


def lookup_events(store: "Store", account_id: str, params: dict[str, str]) -> dict[str, Any]:
    """ActionTrail 2020-07-06 LookupEvents, scoped to one account."""

    now = time.time()
    start_text, end_text = params.get("StartTime"), params.get("EndTime")
    start = parse_iso(start_text, "StartTime") if start_text else now - 7 * 86400
    end = parse_iso(end_text, "EndTime") if end_text else now
    if start > end:
        raise invalid("StartTime", None, "StartTime must be earlier than EndTime.")
    try:
        max_results = int(params.get("MaxResults", "20"))
    except ValueError:
        raise invalid("MaxResults") from None
    if not 1 <= max_results <= 50:
        raise invalid("MaxResults", None, "Valid values: 1 to 50.")
    direction = params.get("Direction", "BACKWARD")
    if direction not in ("FORWARD", "BACKWARD"):
        raise invalid("Direction", None, "Valid values: FORWARD, BACKWARD.")
    where = ["account_id=?", "event_time>=?", "event_time<=?"]
    args: list[Any] = [account_id, start, end + 0.999]
    attrs = {}
    for n in range(1, 10):
        key = params.get(f"LookupAttribute.{n}.Key")
        if key is None:
            continue
        value = params.get(f"LookupAttribute.{n}.Value", "")
        if key not in LOOKUP_KEYS:
            raise invalid(f"LookupAttribute.{n}.Key", None, "Valid keys: " + ", ".join(LOOKUP_KEYS) + ".")
        attrs[key] = value
    if len(attrs) > 2:
        raise invalid("LookupAttribute", None, "At most two lookup attributes are allowed.")
    for key, value in attrs.items():
        col = LOOKUP_KEYS[key]
        if key in ("ResourceName", "ResourceType"):
            sep = "," if key == "ResourceName" else ";"
            where.append(f"(({col}=?) OR ({col} LIKE ?) OR ({col} LIKE ?) OR ({col} LIKE ?))")
            args.extend([value, f"{value}{sep}%", f"%{sep}{value}", f"%{sep}{value}{sep}%"])
        else:
            where.append(f"{col}=?")
            args.append(value)
    token = params.get("NextToken")
    if token:
        try:
            cursor = int(base64.urlsafe_b64decode(token.encode()).decode())
        except (ValueError, UnicodeDecodeError):
            raise ApiError("InvalidNextToken", "The specified NextToken is not valid.", 400) from None
        where.append("seq < ?" if direction == "BACKWARD" else "seq > ?")
        args.append(cursor)
    order = "DESC" if direction == "BACKWARD" else "ASC"
    sql = f"SELECT seq, body FROM events WHERE {' AND '.join(where)} ORDER BY seq {order} LIMIT ?"
    with store.lock:
        rows = store.conn.execute(sql, (*args, max_results + 1)).fetchall()
    events = [json.loads(r["body"]) for r in rows[:max_results]]
    out: dict[str, Any] = {"Events": events, "StartTime": iso(start), "EndTime": iso(end)}
    if len(rows) > max_results:
        out["NextToken"] = base64.urlsafe_b64encode(str(rows[max_results - 1]["seq"]).encode()).decode()
    return out
