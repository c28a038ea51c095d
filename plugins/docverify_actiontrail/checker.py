"""The ``actiontrail`` checker: success is the expected events in the console's audit log.

After execution, every success criterion of the task (an :class:`ExpectedEvent`,
from the doc's ``expect:`` annotation or the built-in map) is looked up with
ActionTrail ``LookupEvents`` through the official client
(``alibabacloud-actiontrail20200706``), in the execution window widened by a
margin for clock skew, for the endpoint's account. The log lags behind the
console, so a criterion not met yet is queried again, backing off, until the
delay budget is spent.

- Every criterion met by an event without ``errorCode`` -> goal reached, provided
  the events carry the values the doc gave: a criterion's ``params``, and every
  value the procedure typed into a field from the doc (a name, a CIDR block, a
  description). An event without them is the goal reached some other way than
  the doc says -> not reached, the reason naming the value.
- Only failed events for a criterion -> not reached; the reason quotes the error.
- No event at all -> not reached; the reason names the event and the window. Where
  the log delivers late (a real cloud's ActionTrail: minutes), the console says an
  event still missing at the deadline may simply not be there yet (``audit_undelivered
  = "inconclusive"``, or the ``undelivered`` option): undecided, INCONCLUSIVE, not FAIL.
- The audit log cannot be asked (unreachable, credentials refused, the client
  missing) -> :class:`~docverify.errors.EnvironmentProblem`, which the runner turns
  into ENV_ERROR: never a doc defect.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import Field, SecretStr

from docverify.check.checker import Checker, Evidence
from docverify.check.criteria import ExpectedEvent
from docverify.console import ConsoleEndpoint
from docverify.errors import CredentialsRejected, EnvironmentProblem
from docverify.report.trajectory import CheckResult
from docverify.scrub import ASCII_MASK, scrub_values
from docverify.task import Task

#: The first retry waits this long; each next one twice as long, up to POLL_CAP_S.
POLL_FIRST_S = 0.25
POLL_CAP_S = 4.0
#: At most this many LookupEvents pages per criterion and query.
MAX_PAGES = 20
#: Error codes that say the credentials (not the request) are the problem.
AUTH_CODES = (
    "InvalidAccessKeyId", "SignatureDoesNotMatch", "IncompleteSignature", "InvalidSecurityToken",
    "Forbidden", "NoPermission", "Unauthorized", "AccessDenied",
)
#: The fields of an event kept as evidence.
EVIDENCE_FIELDS = ("eventId", "eventName", "serviceName", "eventTime", "resourceName", "errorCode", "errorMessage",
                   "requestParameters")
#: Request parameters never copied into evidence.
SECRET_PARAM = re.compile(r"password|secret|signature|token|privatekey|publickeybody", re.I)
#: A request parameter the audit log masks.
MASK = re.compile(r"^[*•]{3,}$")
#: Fields typed into that filter a list, not set a value: their text is in no event.
SEARCH_FIELD = re.compile(r"search|filter|keyword|搜索|查询|过滤", re.I)


class ActionTrailChecker(Checker):
    """Success = the task's expected events are in the console's ActionTrail audit log, without an error code."""

    name = "actiontrail"

    class Options(Checker.Options):
        access_key_id: str | None = Field(
            None, description="AccessKey ID for LookupEvents; default: the console endpoint's "
            "(env DOCVERIFY_CHECKER__ACTIONTRAIL__ACCESS_KEY_ID)")
        access_key_secret: SecretStr | None = Field(
            None, description="its AccessKey secret; default: the console endpoint's "
            "(env DOCVERIFY_CHECKER__ACTIONTRAIL__ACCESS_KEY_SECRET)")
        delay_s: float | None = Field(
            None, ge=0, le=3600, description="how long to keep looking for events the audit log has not shown "
            "yet (its delivery delay); default: the console's `audit_delay_s`, else 10")
        poll_cap_s: float | None = Field(
            None, gt=0, le=600, description="the longest pause between two looks while waiting (they back off from "
            f"{POLL_FIRST_S}s, doubling); default: the console's `audit_poll_cap_s`, else {POLL_CAP_S}")
        undelivered: Literal["fail", "inconclusive"] | None = Field(
            None, description="an expected event still missing when the wait is over: 'fail' (the goal was not "
            "reached) or 'inconclusive' (the log may not have delivered it yet); default: the console's "
            "`audit_undelivered`, else 'fail'")
        max_results: int = Field(50, ge=1, le=50, description="events per LookupEvents page (1-50)")
        margin_s: float = Field(2.0, ge=0, le=3600, description="seconds added before and after the execution "
                                "window, for clock skew")
        timeout_s: float = Field(10.0, gt=0, le=300, description="connect and read timeout of one LookupEvents call")

    def prepare(self) -> None:
        """Import the ActionTrail client in the background while the browser works (about
        half a second of a one-procedure check); :meth:`AuditLog.connect` finds it loaded,
        or says what to install when it is missing."""
        threading.Thread(target=_import_client, name="actiontrail-import", daemon=True).start()

    def applies(self, task: Task) -> bool:
        return bool(task.criteria)

    def audit_reader(self, endpoint: ConsoleEndpoint) -> "Reader | None":
        return Reader(endpoint, self.options) if endpoint.audit_url else None

    async def check(self, evidence: Evidence) -> CheckResult:
        task = evidence.task
        if not task.criteria:
            return CheckResult(self.name, None, "no success criteria: no audit event to look up")
        audit_log = await asyncio.to_thread(AuditLog.connect, evidence.endpoint, self.options,  # imports the client
                                            task.region)
        start = evidence.started - self.options.margin_s
        end = evidence.finished + self.options.margin_s
        names = _typed_names(evidence)
        applied = _applied_values(evidence)
        values = tuple(value for _, value in applied)
        lookups = [Lookup(_resolved(task, criterion), _resource(task, criterion), names, values)
                   for criterion in task.criteria]
        extra = evidence.endpoint.extra
        budget = self.options.delay_s
        if budget is None:
            budget = _float(extra.get("audit_delay_s"), default=10.0)
        cap = self.options.poll_cap_s or _float(extra.get("audit_poll_cap_s"), default=POLL_CAP_S)
        undelivered = self.options.undelivered or extra.get("audit_undelivered") or "fail"
        deadline = time.monotonic() + budget
        pause = POLL_FIRST_S
        while True:
            unanswered: TransientAuditError | None = None
            # until every criterion has its event and they carry what was typed
            lost = bool(_lost(lookups, applied))  # found, but maybe a parallel procedure's event
            try:
                for lookup in [lookup for lookup in lookups if lookup.success is None or lost]:
                    events = await asyncio.to_thread(audit_log.events, lookup.criterion.event, start, end)
                    lookup.take(events, audit_log.account_id)
            except TransientAuditError as error:
                unanswered = error
            if all(lookup.success is not None for lookup in lookups) and not _lost(lookups, applied):
                break
            left = deadline - time.monotonic()
            if left <= 0:
                if unanswered is not None:  # the last word was the network's, not the log's
                    raise EnvironmentProblem(str(unanswered), hint=unanswered.hint)
                break
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, max(cap, POLL_FIRST_S))
        return _result(self.name, lookups, start, end, applied, waited=budget if undelivered == "inconclusive" else None)


def _import_client() -> None:
    try:
        import alibabacloud_actiontrail20200706.client  # noqa: F401
        import alibabacloud_tea_openapi.models  # noqa: F401
    except ImportError:  # said, with the package to install, when the audit log is first asked
        pass


@dataclass
class Lookup:
    """One criterion and what the audit log showed for it so far."""

    criterion: ExpectedEvent
    resource: str | None  #: the criterion's resource, placeholders resolved
    #: names this procedure typed that are unique to it (they hold the run suffix): when
    #: the criterion names no resource, an event counts only if it mentions one of them,
    #: so a parallel procedure's event is never taken for this one's
    names: tuple[str, ...] = ()
    #: values the procedure typed: of two matching events (this procedure's and a parallel
    #: one's, or a provisioner's), the one that carries more of them is this procedure's
    values: tuple[str, ...] = ()
    success: dict[str, Any] | None = None
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)  #: eventId -> failed event

    def take(self, events: list[dict[str, Any]], account_id: str | None) -> None:
        for event in events:
            if not self.matches(event, account_id):
                continue
            if event.get("errorCode"):
                self.failures.setdefault(str(event.get("eventId")), event)
            elif self.success is None or self.carried(event) > self.carried(self.success):
                self.success = event

    def carried(self, event: dict[str, Any]) -> int:
        return sum(1 for value in self.values if _carries(event, value))

    def matches(self, event: dict[str, Any], account_id: str | None) -> bool:
        if event.get("eventName") != self.criterion.event:
            return False
        if self.criterion.params and not all(_carries(event, value, key) for key, value in self.criterion.params.items()):
            return False
        if account_id and str((event.get("userIdentity") or {}).get("accountId") or "") != account_id:
            return False
        service = self.criterion.service
        if service and str(event.get("serviceName") or "").lower() != service.lower():
            return False
        if self.resource is not None:
            return _mentions(event, self.resource)
        return not self.names or any(_mentions(event, name) for name in self.names)

    def describe(self) -> str:
        text = self.criterion.describe()
        return f"{text} on {self.resource}" if self.resource else text


class TransientAuditError(Exception):
    """The audit log could not answer now (network, throttling, server error): retried."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class AuditLog:
    """LookupEvents through the official client, for one endpoint and account (synchronous)."""

    def __init__(self, client: Any, url: str, account_id: str | None, options: ActionTrailChecker.Options,
                 secrets: tuple[str, ...]) -> None:
        self.client = client
        self.url = url
        self.account_id = account_id
        self.options = options
        self._secrets = secrets

    @classmethod
    def connect(cls, endpoint: ConsoleEndpoint, options: ActionTrailChecker.Options,
                region: str | None = None) -> "AuditLog":
        """The audit log of ``endpoint``'s account in ``region`` (default: the endpoint's):
        an ``audit_url`` holding ``{region}`` (a real cloud's regional endpoint,
        ``actiontrail.{region}.aliyuncs.com``) is that region's."""
        try:
            from alibabacloud_actiontrail20200706.client import Client
            from alibabacloud_tea_openapi import models as openapi_models
        except ImportError:
            raise EnvironmentProblem(
                "the actiontrail checker needs the ActionTrail client (alibabacloud-actiontrail20200706)",
                hint="pip install 'docverify[actiontrail]'",
            ) from None
        region = region or endpoint.default_region
        protocol, host = _split_url(endpoint.audit_url.replace("{region}", region),
                                    default_scheme=endpoint.url.partition("://")[0] or "https")
        url = f"{protocol}://{host}"
        key_id = options.access_key_id or endpoint.extra.get("access_key_id")
        secret = options.access_key_secret.get_secret_value() if options.access_key_secret else None
        secret = secret or endpoint.extra.get("access_key_secret")
        if not key_id or not secret:
            raise EnvironmentProblem(
                f"no AccessKey to query the audit log at {url}",
                hint="set access_key_id and access_key_secret in [checker.actiontrail] of docverify.toml or "
                "DOCVERIFY_CHECKER__ACTIONTRAIL__ACCESS_KEY_ID/_SECRET",
            )
        timeout_ms = int(options.timeout_s * 1000)
        config = openapi_models.Config(
            access_key_id=key_id, access_key_secret=secret, endpoint=host, protocol=protocol,
            region_id=region, connect_timeout=timeout_ms, read_timeout=timeout_ms,
        )
        return cls(Client(config), url, endpoint.extra.get("account_id") or None, options, (key_id, secret))

    def events(self, event_name: str | None, start: float, end: float) -> list[dict[str, Any]]:
        """Every event named ``event_name`` (any event when None) between ``start`` and
        ``end`` (epoch seconds), newest first."""
        from alibabacloud_actiontrail20200706 import models
        from darabonba.runtime import RuntimeOptions
        from Tea.exceptions import TeaException

        timeout_ms = int(self.options.timeout_s * 1000)
        runtime = RuntimeOptions(autoretry=False, connect_timeout=timeout_ms, read_timeout=timeout_ms)
        events: list[dict[str, Any]] = []
        token: str | None = None
        for _ in range(MAX_PAGES):
            request = models.LookupEventsRequest(
                start_time=iso(math.floor(start)), end_time=iso(math.ceil(end)),
                max_results=str(self.options.max_results), next_token=token,
                lookup_attribute=[models.LookupEventsRequestLookupAttribute(key="EventName", value=event_name)]
                if event_name else None,
            )
            body = self._lookup(request, runtime, (TeaException, OSError))
            events.extend(event for event in (body.events or []) if isinstance(event, dict))
            token = body.next_token or None
            if not token:
                break
        return events

    def _lookup(self, request, runtime, errors: tuple[type[Exception], ...]):
        """One LookupEvents call. A connection that fails without an answer (a pooled
        keep-alive connection the server closed as it was reused: "connection reset") is
        tried once more at once on a fresh one: the call only reads."""
        for attempt in (1, 2):
            try:
                return self.client.lookup_events_with_options(request, runtime).body
            except errors as error:  # API errors, and Tea's wrapping of network errors
                if attempt == 1 and not getattr(error, "code", None):
                    continue
                raise self._problem(error) from None

    def _problem(self, error: Exception) -> Exception:
        code = str(getattr(error, "code", "") or "")
        status = getattr(error, "status_code", None) or getattr(error, "statusCode", None)
        message = scrub_values(str(getattr(error, "message", "") or error), self._secrets, ASCII_MASK)[:300]
        if code:
            where = f"the audit log at {self.url} refused LookupEvents: {code}: {message}"
            if code.startswith(AUTH_CODES) or status in (401, 403):
                return CredentialsRejected(where, hint="check the AccessKey and that it may call actiontrail:LookupEvents")
            if code.startswith("Throttling") or (isinstance(status, int) and status >= 500):
                return TransientAuditError(where)
            return EnvironmentProblem(where)
        return TransientAuditError(f"cannot reach the audit log at {self.url}: {message}",
                                   hint="is the console running and its audit endpoint reachable?")


class Reader:
    """The console's audit log for the other checkers (:class:`~docverify.check.checker.AuditReader`):
    connected on first use, read in a worker thread."""

    def __init__(self, endpoint: ConsoleEndpoint, options: ActionTrailChecker.Options) -> None:
        self.endpoint = endpoint
        self.options = options
        self._log: AuditLog | None = None

    async def events(self, start: float, end: float, name: str | None = None) -> list[dict[str, Any]]:
        if self._log is None:
            self._log = await asyncio.to_thread(AuditLog.connect, self.endpoint, self.options)
        return await asyncio.to_thread(self._log.events, name, start, end)


def iso(t: float) -> str:
    """Epoch seconds -> the UTC form LookupEvents takes, ``2026-01-31T08:00:00Z``."""
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _result(checker: str, lookups: list[Lookup], start: float, end: float,
            applied: list[tuple[str, str]] = (), waited: float | None = None) -> CheckResult:
    """The answer for what the lookups found. ``waited``: how long the log was given to
    deliver, where a missing event may be one not delivered yet: then a criterion with
    no event at all (and no failed one) leaves the goal undecided, not unreached."""
    window = f"between {iso(math.floor(start))} and {iso(math.ceil(end))}"
    found = [(lookup, lookup.success) for lookup in lookups if lookup.success is not None]
    evidence = [_trim(event) for _, event in found]
    evidence += [_trim(event) for lookup in lookups if lookup.success is None for event in lookup.failures.values()]
    if len(found) == len(lookups):
        listed = "; ".join(f"{lookup.describe()} (event id {event.get('eventId')})" for lookup, event in found)
        lost = _lost(lookups, applied)
        if lost:
            values = ", ".join(f"{field} = {value!r}" for field, value in lost)
            return CheckResult(checker, False, f"audit log: {listed}, but without the value(s) the doc gives: {values} "
                                               "(the console did not apply them)", evidence)
        return CheckResult(checker, True, f"audit log: {listed}", evidence)
    missing = []
    for lookup in lookups:
        if lookup.success is not None:
            continue
        if lookup.failures:
            failed = next(iter(lookup.failures.values()))
            more = f" ({len(lookup.failures)} failed calls)" if len(lookup.failures) > 1 else ""
            missing.append(
                f"{lookup.describe()} failed: {failed.get('errorCode')}: {failed.get('errorMessage') or ''}".rstrip(": ")
                + f" (event id {failed.get('eventId')}){more}"
            )
        else:
            missing.append(f"no {lookup.describe()} event in the audit log {window}")
    undelivered = all(not lookup.failures for lookup in lookups if lookup.success is None)
    if waited is not None and undelivered:
        return CheckResult(checker, None, "; ".join(missing) + f" after waiting {waited:g}s for the audit log to "
                           "deliver it: it may not have arrived yet (wait longer: the console's audit deadline, "
                           "or [checker.actiontrail] delay_s)", evidence)
    return CheckResult(checker, False, "; ".join(missing), evidence)


def _lost(lookups: list[Lookup], applied: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The typed (field, value) pairs none of the events found so far carries; none when
    no more are missing than the events mask (a public key, a password cannot be checked)."""
    found = [lookup.success for lookup in lookups if lookup.success is not None]
    lost = [(field, value) for field, value in applied if not any(_carries(event, value) for event in found)]
    masked = sum(1 for event in found for value in _values(event.get("requestParameters")) if MASK.match(value))
    return lost if len(lost) > masked else []


def _trim(event: dict[str, Any]) -> dict[str, Any]:
    kept = {key: event[key] for key in EVIDENCE_FIELDS if event.get(key) not in (None, "", {})}
    if isinstance(kept.get("requestParameters"), dict):
        kept["requestParameters"] = {key: value for key, value in kept["requestParameters"].items()
                                     if not SECRET_PARAM.search(str(key))}
    return kept


def _applied_values(evidence: Evidence) -> list[tuple[str, str]]:
    """(field, value) the procedure typed into the console's fields and that the goal's
    events must carry: not secrets, not a search box, not a blank."""
    out: dict[tuple[str, str], None] = {}
    for turn in evidence.turns:
        action = turn.action
        if action.get("kind") != "fill" or action.get("secret") or not turn.ok:
            continue
        value, field = str(action.get("value") or "").strip(), str(action.get("target") or "")
        if value and "*" not in value and not SEARCH_FIELD.search(field):
            out[(field, value)] = None
    return list(out)


def _carries(event: dict[str, Any], value: str, key: str | None = None) -> bool:
    """Whether the event's request parameters (the one named ``key``, or any) hold
    ``value``: equal, or containing it, ignoring case and surrounding space."""
    wanted = str(value).strip().casefold()
    parameters = event.get("requestParameters") or {}
    if key is not None:
        parameters = {k: v for k, v in parameters.items() if str(k).casefold() == key.casefold()} \
            if isinstance(parameters, dict) else {}
    return any(wanted == text.strip().casefold() or wanted in text.casefold() for text in _values(parameters)) \
        or (key is None and wanted in str(event.get("resourceName") or "").casefold())


def _typed_names(evidence: Evidence) -> tuple[str, ...]:
    """Values the procedure entered that carry its run suffix (secrets are masked in turns)."""
    suffix = evidence.task.context.get("suffix")
    if not suffix:
        return ()
    typed = (str(turn.action.get("value") or "") for turn in evidence.turns if turn.action.get("kind") == "fill")
    return tuple(dict.fromkeys(value for value in typed if suffix in value))


def _resolved(task: Task, criterion: ExpectedEvent) -> ExpectedEvent:
    """The criterion with its parameters' placeholders resolved (``web-<suffix>``, ``<vpc_1_id>``)."""
    if not criterion.params:
        return criterion
    return replace(criterion, params={key: task.resolve(value) for key, value in criterion.params.items()})


def _resource(task: Task, criterion: ExpectedEvent) -> str | None:
    return task.resolve(criterion.resource) if criterion.resource else None


def _mentions(event: dict[str, Any], name: str) -> bool:
    """Whether the event names the resource: in resourceName (comma-separated ids, maybe
    ARN-like) or as a request parameter's value."""
    for part in str(event.get("resourceName") or "").replace(";", ",").split(","):
        part = part.strip()
        if part == name or part.endswith(("/" + name, ":" + name)):
            return True
    return any(value == name for value in _values(event.get("requestParameters")))


def _values(data: Any) -> list[str]:
    if isinstance(data, dict):
        return [value for item in data.values() for value in _values(item)]
    if isinstance(data, list):
        return [value for item in data for value in _values(item)]
    return [str(data)] if data is not None else []


def _split_url(url: str, *, default_scheme: str) -> tuple[str, str]:
    """``"host:port"`` or ``"http://host:port/"`` -> (protocol, host[:port]) for the client."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = default_scheme, url
    return (scheme if scheme in ("http", "https") else "https"), rest.strip("/")


def _float(value: str | None, *, default: float) -> float:
    try:
        return float(value) if value not in (None, "") else default
    except ValueError:
        return default
