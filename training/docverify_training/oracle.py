"""The ``oracle`` policy: a privileged teacher for the sandbox console (SFT data without a paid API).

It follows the task's own doc with a following policy (``literal`` by default), as the
``hybrid`` policy does, but the steps the follower cannot take as written go to an
:class:`OracleDelegate` that knows the sandbox's releases instead of to a model:

- a label, menu path or field the doc names by an older release's name is taken by
  the name the release changelog gives it now (``Grant Permission`` -> ``Grant``,
  ``Identities > Users`` -> ``Identity Management > Users``);
- a row's control disabled for the resource's state ("Cancel Key Deletion" on an
  enabled key) is reached through the catalog's transitions: the shortest chain of
  row actions whose operations lead from the status the row shows to one of the
  states the control is offered in (``when:``), each confirmed and waited for;
- a value the console now requires that the doc never gives (the changelog's
  ``new_required_field``, named by the console's error) is entered, and the
  submit clicked again;
- a delete refused because the resource still holds children (the catalog's
  ``block_if_children``, its code in the console's error: a bucket with objects)
  is taken again once each child is deleted from the parent's tab that lists them;
- what the doc's prerequisites say holds by the time a step acts on a list's row is
  made to hold where the page shows it does not, through the catalog: a relation a
  row action makes (an EIP associated with the NAT gateway: its ``link:``; an ENI bound
  to an instance: a reference its update sets), a child resource the prerequisite
  describes by its attributes (an inbound rule on a port range from a CIDR block),
  created with its create form, the status it names (an instance Stopped before it is
  released: the transitions, with the form's options it names), and no resource left
  that keeps a delete from being taken (a VPC's vSwitches, the ENIs in a security
  group: the delete operation's dependents, deleted from their own list)
  (:meth:`Delegate.before_step`). The row such a step acts on is the one its noun or,
  where the parser gives none, its control and words name ("Find the ENI `x` and click
  **Unbind**").

Each of its actions says ``by="oracle"``; every action of the episode gets a short,
true Thought (what the doc says, what the page shows, why this action), so recorded
turns teach the student to reason. The sandbox only: the release is read from the
console's own home page ("Release: 2026-03"), a page that is not the sandbox's is
refused.
"""

from __future__ import annotations

import functools
import re
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import Field as Option
from pydantic import model_validator

from docverify.check.verdict import FindingKind
from docverify.errors import ConfigError
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.follow import Delegate, Delegating, DelegatingOptions, Follower, Stuck
from docverify.execute.locate import Element, children, locate, normalize, within
from docverify.execute.policy import Policy
from docverify.parse.model import Action as DocAction
from docverify.parse.model import Intent, Step
from docverify.task import Task
from docverify_literal.rows import CONTEXT_KEY, ID_LIKE, data_rows, resource_link, row_text
from docverify_reports.problems import one_line
from docverify_training.record import thought_for

#: The Thought kept with each action: the student's prompt cuts it there.
THOUGHT_CHARS = 100
#: How many fixes the oracle nests (a renamed label inside a detour...) before it gives up.
MAX_DEPTH = 3
#: The release line of the sandbox's home page ("Release: 2026-03 (Console as of March 2026)").
RELEASE_LINE = re.compile(r"Release:\s*(\d{4}-\d{2})")
#: The end of every sandbox page's title (English and Chinese consoles).
SANDBOX_TITLE = re.compile(r"Sandbox Console|沙箱控制台", re.IGNORECASE)
#: Controls that confirm a dialog, best first.
CONFIRMS = ("OK", "Confirm", "确定")
#: How many children the oracle deletes before a refused delete, at most.
MAX_CHILDREN = 20
#: Past participles a doc says a relation with that a row action's verb does not spell ("bound" for "Bind").
IRREGULAR = {"bind": ("bound",)}
#: A resource's name as a doc gives it: hyphenated, with the run's placeholder or a number ("legacy-web-<suffix>").
NAME = re.compile(r"^[A-Za-z0-9][\w.]*(?:-[\w.<>]+)+$")


class OracleOptions(DelegatingOptions):
    """The oracle's options. Keys it does not own are its follower's options
    (``close_threshold`` for ``literal``), validated against the follower's own."""

    release: str | None = Option(None, description="the sandbox release the console serves (YYYY-MM or a release name); "
                                                    "default: the one its home page names, else the task's x-bench "
                                                    "release, else the newest")

    @model_validator(mode="after")
    def _a_known_release(self) -> OracleOptions:
        if self.release is not None:
            from docverify_sandbox.catalog import resolve_release

            resolve_release(self.release)  # a UsageError naming the releases there are
        return self


class OraclePolicy(Delegating, Policy):
    """A privileged sandbox-only teacher: the doc followed, drift and preconditions
    resolved from the sandbox's catalog and release changelog, with a true Thought per action."""

    name = "oracle"
    Options = OracleOptions

    def prepare(self) -> None:
        self.prepare_follower()

    def delegate_for(self, task: Task) -> Delegate:
        options: OracleOptions = self.options  # type: ignore[assignment]
        return OracleDelegate(task, options.release)

    def close(self) -> None:
        self.close_follower()


# -- what the oracle knows of a release -----------------------------------------------------


@dataclass(frozen=True)
class RowAction:
    """A row action of the catalog: its resource's statuses and what it does to them."""

    product: str
    resource: str
    label: str
    menu: tuple[str, ...]
    when: tuple[str, ...]  #: status keys it is offered in; () for any
    to: str | None  #: the status key its transition ends in; None when it changes none
    dialog: dict[str, Any]  #: its confirm or form dialog ({} for none)
    statuses: dict[str, str]  #: status key -> label the list shows
    op: str = ""  #: the operation it calls
    form_fields: tuple[str, ...] = ()  #: the fields its form dialog holds
    noun: str = ""  #: what the resource is called ("instance")
    placement: str = "row"  #: "row" (a list row's control) or "detail" (on the resource's own page)
    #: the form's fields that bind another resource to this one: the op's ``link:`` (recorded on
    #: the other one too), or a reference the op sets while it changes the status (an EIP's instance)
    links: tuple[str, ...] = ()
    after: str | None = None  #: the status key an update leaves the resource in (a bind: "InUse"); None for none


class ReleaseKnowledge:
    """The sandbox console as of one release: its catalog, and every change from the
    oldest release to it (the drift a doc written for an older one meets)."""

    def __init__(self, release: str) -> None:
        from docverify_sandbox import catalog

        self.catalog = catalog.load(release)
        self.name = self.catalog.release.name
        self.changes = catalog.changelog(catalog.releases()[0].name, self.name)

    def renamed(self, label: str) -> list[str]:
        """What the console calls a label, menu path ("A > B") or field of an older
        release now, per the changelog (chains of renames followed); [] when unchanged."""
        key, out, seen = normalize(label), [], set()
        frontier = [key]
        while frontier:
            current = frontier.pop()
            for change in self.changes:
                if change.old and change.new and normalize(change.old) == current and change.new not in out:
                    new = re.sub(r"\s*\((?:required)\)\s*$", "", change.new)
                    out.append(new)
                    if normalize(new) not in seen:
                        seen.add(normalize(new))
                        frontier.append(normalize(new))
        return out

    def renamed_path(self, path: list[str]) -> list[list[str]]:
        """A menu path with its renamed parts: the whole path's rename, then each item's."""
        whole = [p.split(" > ") for p in self.renamed(" > ".join(path)) if " > " in p]
        items = [[(self.renamed(item) or [item])[0] for item in path]]
        return [p for p in [*whole, *items] if p != path]

    def required_now(self) -> list[tuple[str, str, str]]:
        """(product, resource, field) of the fields a change made required."""
        out = []
        for change in self.changes:
            if change.kind != "new_required_field":
                continue
            label = normalize(re.sub(r"\s*\(required\)\s*$", "", change.new or ""))
            product = self.catalog.products.get(change.product, {})
            for rkey, res in product.get("resources", {}).items():
                for name, spec in res.get("fields", {}).items():
                    if spec.get("required") and normalize(spec["label"]) == label:
                        out.append((change.product, rkey, name))
        return out

    @functools.cached_property
    def row_actions(self) -> list[RowAction]:
        out = []
        for pkey, product in self.catalog.products.items():
            for rkey, res in product.get("resources", {}).items():
                ops = {**res.get("ops", {}), **res.get("extra_ops", {})}
                for action in (res.get("actions") or {}).values():
                    op = ops.get(action.get("op", ""), {})
                    to = op.get("to") if op.get("kind") == "transition" else None
                    dialog = action.get("confirm") or action.get("form") or {}
                    fields = (action.get("form") or {}).get("fields") or ()
                    out.append(RowAction(pkey, rkey, action["label"], tuple(action.get("menu") or ()),
                                         tuple(action.get("when") or ()), to, dialog, dict(res.get("statuses") or {}),
                                         action.get("op", ""), tuple(fields), res.get("singular", rkey).lower(),
                                         action.get("placement", "row"), self.bound_by(res, op, fields),
                                         op.get("to") if op.get("kind") == "update" else None))
        return out

    @staticmethod
    def bound_by(res: dict[str, Any], op: dict[str, Any], fields: Iterable[str]) -> tuple[str, ...]:
        """The fields of a row action's form that bind another resource to the row's: those
        of the op's ``link:``, and the references an update sets while it changes the
        status ("Bind to Instance": an ENI's instance, the ENI In Use)."""
        linked = [f for f in (op.get("link") or {}) if f in fields]
        own = [f for f in fields if op.get("kind") == "update" and op.get("to") and f in op.get("params", ())
               and (res.get("fields", {}).get(f) or {}).get("type") == "ref"]
        return tuple(dict.fromkeys([*linked, *own]))

    def guards(self) -> list[tuple[RowAction, RowAction, str]]:
        """(the row action a protection switch refuses, the row action whose dialog
        holds that switch, the switch's label): the catalog's ``protect:`` operations."""
        out = []
        for pkey, product in self.catalog.products.items():
            for rkey, res in product.get("resources", {}).items():
                for op_name, op in {**res.get("ops", {}), **res.get("extra_ops", {})}.items():
                    field = op.get("protect")
                    if not field or field not in res.get("fields", {}):
                        continue
                    label = res["fields"][field]["label"]
                    mine = [a for a in self.row_actions if (a.product, a.resource) == (pkey, rkey)]
                    guarded = [a for a in mine if a.op == op_name]
                    setters = [a for a in mine if field in a.form_fields]
                    out += [(g, s, label) for g in guarded for s in setters]
        return out

    def products_of(self, product: str | None) -> list[str]:
        """The catalog's products a doc's ``product:`` names ("NAT Gateway" -> nat); all when it names none."""
        wanted = normalize(product or "")
        named = [key for key, spec in self.catalog.products.items()
                 if wanted in (normalize(key), normalize(spec.get("title", "")))]
        return named or list(self.catalog.products)

    def kind_named(self, noun: str, product: str | None) -> tuple[str, str] | None:
        """The (product, resource type) a doc's noun names ("inbound rule" -> the security
        group rule, "NAT gateway" -> the NAT gateway): the one whose name shares the most
        words with it, within the doc's product; None when none shares one."""
        words = name_words(noun)
        scored = []
        for pkey in self.products_of(product):
            for rkey, res in self.catalog.products[pkey].get("resources", {}).items():
                mine = name_words(res.get("singular", rkey)) | name_words(rkey)
                if shared := len(words & mine):
                    scored.append((shared, -len(mine), pkey, rkey))
        return max(scored)[2:] if scored else None

    def blocked_by(self, message: str) -> list[tuple[RowAction, str]]:
        """(the delete action the console refused, the child resource type it still holds)
        for an error naming a delete operation's ``block_if_children`` code (and, where
        one code serves several child types, the child's title)."""
        from docverify_sandbox.operations import blocking_children

        out = []
        for action in self.row_actions:
            res = self.catalog.resource(action.product, action.resource)
            op = {**res.get("ops", {}), **res.get("extra_ops", {})}.get(action.op, {})
            if op.get("kind") != "delete":
                continue
            codes = blocking_children(op)
            named = [child for child, code in codes.items() if code in message]
            titled = [child for child in named if self.catalog.resource(action.product, child)["title"] in message]
            out += [(action, child) for child in (titled or (named if len(named) == 1 else []))]
        return out

    def relations(self, product: str, rtype: str) -> list[tuple[RowAction, str, str, str]]:
        """(row action, its field, the bound resource's product, its type) of the row
        actions that bind another resource to one of ``rtype`` (an EIP to a NAT gateway)."""
        out = []
        for action in self.row_actions:
            if (action.product, action.resource) != (product, rtype):
                continue
            for name in action.links:
                spec = self.catalog.field_spec(product, rtype, name) or {}
                if spec.get("ref"):
                    out.append((action, name, spec.get("product", product), spec["ref"]))
        return out

    def detour(self, label: str, row_text: str, product: str | None) -> tuple[RowAction, list[RowAction], str] | None:
        """The row action named ``label`` that the row (showing ``row_text``) does not
        offer in its status, the shortest chain of transitions that brings the row to a
        status it is offered in, and the status the row shows; None when none is known."""
        for target in self.actions_named(label, product):
            status = shown_status(target.statuses, row_text)
            if status is None or not target.when or status in target.when:
                continue
            chain = self.transitions(target, status)
            if chain is not None:
                return target, chain, status
        return None

    def actions_named(self, label: str, product: str | None) -> list[RowAction]:
        found = [a for a in self.row_actions if normalize(a.label) == normalize(label)]
        wanted = normalize(product or "")
        return sorted(found, key=lambda a: not wanted or wanted not in (normalize(a.product),
                                                                       normalize(self.catalog.products[a.product]["title"])))

    def transitions(self, target: RowAction, start: str, goal: Iterable[str] = ()) -> list[RowAction] | None:
        """The shortest chain of the resource's transitions from ``start`` to a status
        ``target`` is offered in (or to one of ``goal``, when given)."""
        goal = tuple(goal) or target.when
        moves = [a for a in self.row_actions if (a.product, a.resource) == (target.product, target.resource) and a.to]
        queue, seen = deque([(start, [])]), {start}
        while queue:
            status, chain = queue.popleft()
            if status in goal:
                return chain
            for move in moves:
                if (not move.when or status in move.when) and move.to not in seen:
                    seen.add(move.to)
                    queue.append((move.to, [*chain, move]))
        return None

    def kinds_acting(self, act: DocAction, named: str, product: str | None) -> set[tuple[str, str]]:
        """The (product, resource type)s whose row action the doc's control is (its label,
        under its menu path where one has it) and whose noun ``named`` has: "Find the ENI
        ... click **Unbind**" -> the ENI, not the EIP."""
        label = act.path[-1] if act.path else act.target
        if not label or act.intent not in (Intent.CLICK, Intent.NAVIGATE):
            return set()
        labels = {normalize(label), *map(normalize, self.renamed(label))}
        products = self.products_of(product)
        found = [a for a in self.row_actions if normalize(a.label) in labels and a.product in products]
        menu = [a for a in found if act.path and [normalize(m) for m in a.menu] == [normalize(m) for m in act.path[:-1]]]
        words = name_words(named)
        return {(a.product, a.resource) for a in (menu or found) if name_words(a.noun) <= words}

    def dependents(self, product: str, rtype: str) -> list[Dependent]:
        """What the catalog's delete operation of ``rtype`` refuses to delete it for, where
        a list of its own shows which ones hold it (a VPC's vSwitches, the ENIs in a
        security group: their list's column of the held resource's ID)."""
        res = self.catalog.resource(product, rtype)
        delete = next((op for op in ops_of(res).values() if op.get("kind") == "delete"), None)
        if delete is None:
            return []
        from docverify_sandbox.operations import blocking_children

        held = [(product, child, res["id_param"]) for child in blocking_children(delete)]
        held += [(product, other, res["id_param"]) for other in delete.get("block_if_referenced", [])]
        held += [(ref.get("product", product), ref["rtype"], ref.get("attr", res["id_param"]))
                 for ref in delete.get("referenced_by", []) if ref.get("error")]
        out = []
        for dproduct, dtype, attr in held:
            dres = self.catalog.resource(dproduct, dtype)
            shown = any(column.get("value") == attr for column in (dres.get("columns") or {}).values())
            remove = next((a for a in self.row_actions if (a.product, a.resource) == (dproduct, dtype)
                           and a.placement != "detail" and (ops_of(dres).get(a.op) or {}).get("kind") == "delete"), None)
            path = self.nav_path(dproduct, dtype)
            if shown and remove is not None and path and dproduct == product:
                out.append(Dependent(dproduct, dtype, attr, dres.get("singular", dtype), path, remove))
        return out

    def nav_path(self, product: str, rtype: str) -> list[str]:
        """The left-side navigation path to the list of ``rtype`` (group, item); [] when none."""
        spec = self.catalog.products[product]
        item = next((i for i in (spec.get("nav") or {}).values() if i.get("resource") == rtype), None)
        if item is None:
            return []
        group = (spec.get("groups") or {}).get(item.get("group") or "")
        return [group, item["label"]] if group else [item["label"]]


@dataclass(frozen=True)
class Dependent:
    """A resource type that keeps another from being deleted, and where to delete it."""

    product: str
    rtype: str
    attr: str  #: its attribute (a column of its list) that names the held resource
    noun: str  #: what it is called ("vSwitch")
    path: list[str]  #: the navigation path to its list
    remove: RowAction  #: its list row's delete action


def ops_of(res: dict[str, Any]) -> dict[str, Any]:
    """A catalog resource's operations, its extra ones included."""
    return {**res.get("ops", {}), **res.get("extra_ops", {})}


def name_words(name: str) -> set[str]:
    """The words of a resource's name, without articles ("the NAT Gateway" -> {"nat", "gateway"})."""
    return {w for w in re.split(r"[^a-z0-9]+", name.lower()) if w and w not in ("the", "a", "an", "of")}


def says(text: str, label: str) -> bool:
    """Whether ``text`` has ``label`` as words of its own, inflected or not ("allows" for "Allow")."""
    return bool(re.search(rf"(?<!\w){re.escape(label)}(?:s|es|d|ed)?(?!\w)", text, re.IGNORECASE))


#: A CIDR block as a doc writes it.
CIDR = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}$")
def shown_status(statuses: dict[str, str], text: str) -> str | None:
    """The status key whose label a row shows (the longest that it shows as words)."""
    shown = [key for key, label in statuses.items() if re.search(rf"(?<!\w){re.escape(label)}(?!\w)", text)]
    return max(shown, key=lambda key: len(statuses[key]), default=None)


@functools.cache
def knowledge(release: str) -> ReleaseKnowledge:
    return ReleaseKnowledge(release)


# -- the delegate ---------------------------------------------------------------------------


class OracleDelegate(Delegate):
    """Resolves the steps the follower cannot take as written from the release's
    catalog and changelog; writes every action's Thought."""

    def __init__(self, task: Task, release: str | None = None) -> None:
        self.task = task
        self.release = release  #: as configured; else read from the console
        self.follower: Follower | None = None
        self.depth = 0  #: fixes in progress (a fix that gets stuck itself)
        self.page: Observation | None = None
        self.handled: set[str] = set()  #: the prerequisite sentences made to hold (or found holding)
        self.cleared: set[tuple[tuple[str, str], str]] = set()  #: (kind, dependent type) already deleted

    # -- the console and its release

    def observe(self, observation: Observation) -> None:
        if self.page is None:
            self.first_page(observation)
        self.page = observation

    def first_page(self, observation: Observation) -> None:
        """The console the episode starts on must be the sandbox; its home page names its release."""
        if not SANDBOX_TITLE.search(observation.title or ""):
            raise ConfigError(
                f"the oracle policy knows only the sandbox console's releases, and {observation.url} "
                f"({observation.title or 'no title'}) is not the sandbox",
                hint="run it against the sandbox (console.use = \"sandbox\"), or choose another policy")
        if self.release is None and (line := RELEASE_LINE.search(observation.snapshot)):
            self.release = line[1]

    @functools.cached_property
    def known(self) -> ReleaseKnowledge:
        """The release the console serves: configured, else its home page's, else the task's, else the newest."""
        release = self.release
        if release is None and self.task.procedure.annotation is not None:
            bench = self.task.procedure.annotation.extra.get("x-bench") or {}
            release = bench.get("release") if isinstance(bench, dict) else None
        from docverify_sandbox.catalog import releases

        return knowledge(release or releases()[-1].name)

    # -- the follower's hand-overs

    def started(self, follower: Follower) -> None:
        self.follower = follower

    def decided(self, action: Action) -> None:
        if action.thought is None:  # a followed step's: what the doc says and what the action does
            action.thought = thought_for(action, self.task, THOUGHT_CHARS)

    async def stuck(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        if self.depth < MAX_DEPTH and not follower.missing_prerequisite(stuck):
            self.depth += 1
            try:
                taken = False
                async for action in self.resolve(follower, stuck):
                    taken = True
                    yield action
            finally:
                self.depth -= 1
            if taken:
                return
        async for action in follower.flag_stuck(stuck):
            yield action

    async def resolve(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        """The oracle's way past ``stuck``, or nothing when it knows none."""
        for fix in (self.renamed, self.required_value, self.unprotect, self.empty_first):
            taken = False
            async for action in fix(follower, stuck):
                taken = True
                yield action
            if taken:
                return

    async def renamed(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        """The doc's label as the changelog names it now, when the page shows it."""
        act, expected = stuck.action, stuck.finding.expected
        if act is None:  # a field of a parameter table: "field X"
            name = re.sub(r"^field\s+", "", expected)
            field = next((f for f in stuck.step.fields if normalize(f.name) == normalize(name)), None)
            new = next((n for n in self.known.renamed(name) if self.shows(n)), None)
            if field is None or new is None:
                return
            act = DocAction(Intent.FILL, field.line, target=new, value=field.value)
            rewritten, old = act, name
        elif act.path:
            path = next((p for p in self.known.renamed_path(act.path) if self.shows(p[-1])), None)
            if path is None:
                return
            rewritten, old, new = replace(act, path=path), " > ".join(act.path), " > ".join(path)
        elif act.value and act.intent is Intent.SELECT:  # "select **Programmatic Access**": an option renamed
            new = next((n for n in self.known.renamed(act.value) if self.shows(n)), None)
            if new is None:
                return
            rewritten, old = replace(act, value=new), act.value
        elif act.target:
            new = next((n for n in self.known.renamed(act.target) if self.shows(n)), None)
            if new is None:
                return
            rewritten, old = replace(act, target=new), act.target
        else:
            return
        stuck.finding.resolved_by = f"oracle: the {self.known.name} console calls it '{new}'"
        yield Action(ActionKind.FLAG_STEP, finding=stuck.finding, step=stuck.step.number, by="oracle",
                     thought=cut(f"Doc says '{old}'; in {self.known.name} it is '{new}': flag, then use it."))
        async for action in self.own(follower.follow_action(stuck.step, rewritten),
                                     f"Doc's '{old}' is '{new}' on this page (renamed)."):
            yield action

    async def required_value(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        """A field the console now requires (the changelog's ``new_required_field``)
        that the doc leaves blank, named by the console's error: enter a value of the
        run's own, then submit again."""
        if stuck.finding.kind is not FindingKind.MISSING_STEP or stuck.action is None or not stuck.action.target:
            return
        message = stuck.finding.observed
        for product, resource, name in self.known.required_now():
            label = self.known.catalog.field_spec(product, resource, name)["label"]  # type: ignore[index]
            if name not in message and normalize(label) not in normalize(message):
                continue
            if not self.shows(label):
                continue
            value = self.task.unique(re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-"))
            yield Action(ActionKind.FLAG_STEP, finding=stuck.finding, step=stuck.step.number, by="oracle",
                         thought=cut(f"Console requires '{label}' since {self.known.name}; doc gives none."))
            async for action in self.own(follower.follow_action(stuck.step, DocAction(Intent.FILL, stuck.action.line,
                                                                                      target=label, value=value)),
                                         f"'{label}' is required now: enter a name of this run."):
                yield action
            async for action in self.own(follower.follow_action(stuck.step, stuck.action),
                                         f"'{label}' filled: click '{stuck.action.target}' again."):
                yield action
            return

    async def unprotect(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        """An action the console refused for a protection switch (the catalog's
        ``protect:``, named in its error): the dialog dismissed, the switch turned off
        through the row action that holds it, then the refused action again."""
        if stuck.action is None:
            return
        message = stuck.finding.observed
        product = self.task.procedure.product
        for guarded, setter, label in self.known.guards():
            op = self.known.catalog.resource(guarded.product, guarded.resource)["ops"][guarded.op]
            if op["protect"] not in message or (product and normalize(product) != normalize(guarded.product)):
                continue
            act = DocAction(Intent.CLICK, stuck.action.line, resource=guarded.noun)
            yield Action(ActionKind.FLAG_STEP, finding=stuck.finding, step=stuck.step.number, by="oracle",
                         thought=cut(f"'{guarded.label}' refused: {label} is on. Turn it off first."))
            async for action in self.dismiss(follower, stuck.step, act):
                yield action
            async for action in self.own(follower.follow_action(stuck.step, self.row_doc_action(act, setter)),
                                         f"Open '{setter.label}' to turn {label} off."):
                yield action
            async for action in self.own(follower.follow_action(stuck.step, DocAction(Intent.TOGGLE, act.line,
                                                                                      target=label, value="off")),
                                         f"Turn off {label}."):
                yield action
            async for action in self.confirm(follower, stuck.step, act, setter):
                yield action
            async for action in self.own(follower.follow_action(stuck.step, self.row_doc_action(act, guarded)),
                                         f"{label} is off: '{guarded.label}' again, as the doc says."):
                yield action
            async for action in self.confirm(follower, stuck.step, act, guarded):
                yield action
            return

    async def empty_first(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        """A delete the console refused because the resource still holds children (the
        catalog's ``block_if_children``, its code in the error): the dialog dismissed,
        the parent's tab that lists them opened, each child deleted and confirmed, then
        the refused delete again."""
        if stuck.action is None or self.page is None:
            return
        products = self.known.products_of(self.task.procedure.product)
        for delete, child in self.known.blocked_by(stuck.finding.observed):
            if delete.product not in products:
                continue
            parent = self.known.catalog.resource(delete.product, delete.resource)
            held = self.known.catalog.resource(delete.product, child)
            tab = listing_tab(parent, held)
            remove = next((a for a in self.known.row_actions if (a.product, a.resource) == (delete.product, child)
                           and self.op_kind(a) == "delete"), None)
            if tab is None or remove is None or not self.shows(tab):
                continue
            act, noun = stuck.action, held.get("singular", child).lower()
            stuck.finding.resolved_by = f"oracle: each {noun} deleted first ('{tab}' tab), then '{delete.label}' again"
            yield Action(ActionKind.FLAG_STEP, finding=stuck.finding, step=stuck.step.number, by="oracle",
                         thought=cut(f"'{delete.label}' refused: the {delete.noun} still holds {held['title']}. "
                                     "Delete them first."))
            async for action in self.dismiss(follower, stuck.step, act):
                yield action
            async for action in self.own(follower.follow_action(stuck.step, DocAction(Intent.CLICK, act.line, target=tab)),
                                         f"The '{tab}' tab lists the {noun}s the {delete.noun} holds."):
                yield action
            for _ in range(MAX_CHILDREN):
                rows = data_rows(self.page.elements if self.page else [])
                if not rows:
                    break
                async for action in self.own(follower.follow_action(stuck.step, self.row_doc_action(
                        DocAction(Intent.CLICK, act.line, resource=noun), remove)),
                        f"{len(rows)} {noun}(s) left: '{remove.label}' on the next one."):
                    yield action
                async for action in self.confirm(follower, stuck.step, act, remove):
                    yield action
            redo = [act] if act.intent is not Intent.CONFIRM else [
                self.row_doc_action(DocAction(Intent.CLICK, act.line,
                                              resource=None if delete.placement == "detail" else delete.noun), delete), act]
            for again in redo:
                thought = (f"The {delete.noun} is empty now: '{delete.label}' again." if again is not act
                           else f"Now step {stuck.step.number} as the doc says: {again.target or delete.label}.")
                async for action in self.own(follower.follow_action(stuck.step, again), thought):
                    yield action
            return

    def op_kind(self, action: RowAction) -> str | None:
        res = self.known.catalog.resource(action.product, action.resource)
        return {**res.get("ops", {}), **res.get("extra_ops", {})}.get(action.op, {}).get("kind")

    # -- the doc's prerequisites

    @functools.cached_property
    def prerequisites(self) -> list[str]:
        """The sentences of what the doc says must hold before its steps (the parser's
        prerequisites: a prerequisites section, a bold "Prerequisites:" lead, bare sentences)."""
        return [sentence for text in self.task.procedure.prerequisites
                for sentence in re.split(r"(?<=[.。])\s+", text) if sentence.strip()]

    async def before_step(self, follower: Follower, step: Step) -> AsyncIterator[Action]:
        """What the doc's prerequisites say holds by the time a step acts on a resource
        of a list, made to hold where the page shows it does not: a relation the
        catalog's row action makes (an EIP associated with the NAT gateway, an ENI
        bound to an instance), a child resource its attributes describe (an inbound
        rule on a port range), the status it names (an instance Stopped), and no
        resource left that keeps it from being deleted (a VPC's vSwitches)."""
        if self.depth >= MAX_DEPTH or self.page is None or not self.prerequisites:
            return
        for act in step.actions:
            kind = self.kind_of(step, act)
            if kind is None:
                continue
            self.depth += 1
            try:
                for sentence in [s for s in self.prerequisites if s not in self.handled]:
                    for fix in (self.relate, self.add_child, self.reach_status, self.clear_dependents):
                        taken = False
                        async for action in fix(follower, step, act, kind, sentence):
                            taken = True
                            yield action
                        if taken:
                            self.handled.add(sentence)
                            break
            finally:
                self.depth -= 1

    def kind_of(self, step: Step, act: DocAction) -> tuple[str, str] | None:
        """The (product, resource type) of the existing resource a doc action acts on:
        the parser's noun ("find the NAT gateway ..."), else the one whose row action the
        control is and whose noun the step names ("Find the ENI `x` and click **Unbind**")."""
        if act.resource:
            return self.known.kind_named(act.resource, self.task.procedure.product)
        kinds = self.known.kinds_acting(act, self.task.resolve(step.text), self.task.procedure.product)
        return kinds.pop() if len(kinds) == 1 else None

    def noun(self, act: DocAction, kind: tuple[str, str]) -> str:
        """What the doc calls the resource an action acts on: its noun, else the catalog's."""
        return act.resource or in_text(self.known.catalog.resource(*kind).get("singular", kind[1]))

    def names(self, text: str) -> list[str]:
        """The resource names ``text`` gives (:func:`names_in`), as this run calls them."""
        return [self.task.resolve(name) for name in names_in(text)]

    async def relate(self, follower: Follower, step: Step, act: DocAction, kind: tuple[str, str],
                     sentence: str) -> AsyncIterator[Action]:
        """The prerequisite binds a resource to the row's (the catalog's ``link:``, or a
        reference its update sets): its row action, the bound resource chosen in its
        form (the one the sentence names, else this run's), confirmed, its status waited for."""
        page = self.page
        words = name_words(sentence)
        if page is None or not name_words(self.noun(act, kind)) <= words:
            return
        doc_label = normalize(act.path[-1] if act.path else act.target or "")
        for move, name, product, rtype in self.known.relations(*kind):
            other = self.known.catalog.resource(product, rtype)
            if not name_words(other.get("singular", rtype)) <= words or not self.says_done(sentence, move):
                continue
            if doc_label in {normalize(move.label), *(normalize(old) for old in self.older_names(move.label))}:
                return  # the step itself makes it
            row = self.row_for(follower, step, act, kind, sentence)
            if row is None:
                return
            shown = row_text(page.elements, row)
            status = shown_status(move.statuses, shown)
            if any(value in shown for value in self.known_values(rtype)) or (move.when and status not in move.when):
                return  # it holds already (or the row offers no such action)
            label = self.known.catalog.field_spec(*kind, name)["label"]  # type: ignore[index]
            noun = in_text(other.get("singular", rtype))
            ident = row_ident(page.elements, row)
            self.handled.add(sentence)
            why = f"'{move.label}': the row shows no {noun}, and the doc needs: {self.task.resolve(sentence)}"
            if ident is None:
                async for action in self.own(follower.follow_action(step, self.row_doc_action(act, move)), why):
                    yield action
            else:
                async for action in self.on_row(step, ident, move, why):
                    yield action
            async for action in self.named_options(follower, step, act, move):
                yield action
            async for action in self.choose(follower, step, act, label, self.names(sentence),
                                            f"Choose this run's {noun} in '{label}'."):
                yield action
            async for action in self.confirm(follower, step, act, move):
                yield action
            if move.after and (after := move.statuses.get(move.after)) and not (ident and self.row_shows(ident, after)):
                yield self.wait(step, after, f"Wait until the {self.noun(act, kind)} shows '{after}'.")
            return

    def says_done(self, sentence: str, move: RowAction) -> bool:
        """Whether ``sentence`` says what ``move`` does has been done: its operation's or
        label's verb, inflected ("associated", "bound"), or the status it leaves ("In Use")."""
        verbs = [m[0] for m in (re.match(r"[A-Z][a-z]+", move.op), re.match(r"\w+", move.label)) if m]
        forms = {form for verb in verbs for form in (verb.lower(), *IRREGULAR.get(verb.lower(), ()))}
        after = move.statuses.get(move.after or "", "")
        return any(says(sentence, form) for form in forms) or bool(after and says(sentence, after))

    def older_names(self, label: str) -> list[str]:
        """The names an older release gave a label (the changelog's renames to it)."""
        return [change.old for change in self.known.changes
                if change.old and change.new and normalize(change.new) == normalize(label)]

    async def choose(self, follower: Follower, step: Step, act: DocAction, label: str, names: list[str],
                     thought: str) -> AsyncIterator[Action]:
        """In the form's list ``label``, the option that shows one of ``names``, else this run's."""
        elements = self.page.elements if self.page else []
        field = next((e for e in elements if e.ref and e.role in ("combobox", "listbox")
                      and normalize(e.name) == normalize(label)), None)
        options = [e.name for e in children(elements, field) if e.role == "option" and e.name] if field else []
        named = next((o for o in options if any(name in o for name in names)), None)
        async for action in self.own(follower.follow_action(step, DocAction(Intent.SELECT, act.line, target=label,
                                                                            value=named)), thought):
            yield action

    async def reach_status(self, follower: Follower, step: Step, act: DocAction, kind: tuple[str, str],
                           sentence: str) -> AsyncIterator[Action]:
        """The prerequisite names the status the resource is in ("The instance `x` is in
        the **Stopped** state") and its row shows another: the catalog's transitions to
        it, each confirmed and waited for (what the console would refuse the step for)."""
        page = self.page
        if page is None or not name_words(self.noun(act, kind)) <= name_words(sentence):
            return
        moves = [a for a in self.known.row_actions if (a.product, a.resource) == kind]
        statuses = moves[0].statuses if moves else {}
        wanted = [key for key, label in statuses.items() if re.search(rf"(?<!\w){re.escape(label)}(?!\w)", sentence)]
        row = self.row_for(follower, step, act, kind, sentence) if wanted else None
        if row is None:
            return
        ident, status = row_ident(page.elements, row), shown_status(statuses, row_text(page.elements, row))
        if ident is None or status is None or status in wanted:
            return
        chain = self.known.transitions(moves[0], status, wanted)
        if not chain:
            return
        noun = self.noun(act, kind)
        self.handled.add(sentence)
        for move in chain:
            shown = move.statuses.get(move.to or "", move.to or "")
            async for action in self.on_row(step, ident, move, f"Doc needs the {noun} {shown}; it is "
                                                               f"{statuses.get(status, status)}: '{move.label}' first."):
                yield action
            async for action in self.named_options(follower, step, act, move):
                yield action
            async for action in self.confirm(follower, step, act, move):
                yield action
            if not self.row_shows(ident, shown):
                yield self.wait(step, shown, f"Wait until the {noun} shows '{shown}'.")

    async def named_options(self, follower: Follower, step: Step, act: DocAction, move: RowAction) -> AsyncIterator[Action]:
        """In ``move``'s form, the options a prerequisite that says to do it names ("stop it
        first in **No Fees for Stopped Instances** mode"), where they are not the default."""
        verb = re.match(r"\w+", move.label)
        sentences = [s for s in self.prerequisites if verb and says(s, verb[0])]
        for label, spec in self.form_fields(move):
            named = [option for key, option in spec["options"].items() if key != spec.get("default")
                     and any(re.search(rf"(?<!\w){re.escape(option)}(?!\w)", s) for s in sentences)]
            if named and self.shows(label):
                choice = max(named, key=len)
                async for action in self.own(follower.follow_action(step, DocAction(Intent.SELECT, act.line, target=label,
                                                                                    value=choice)),
                                             f"Doc's prerequisites say '{choice}' for {label}."):
                    yield action

    def form_fields(self, move: RowAction) -> list[tuple[str, dict[str, Any]]]:
        """(label, spec) of the fields with options in a row action's form."""
        fields = move.dialog.get("fields") or {}
        specs = fields.items() if isinstance(fields, dict) else \
            [(name, self.known.catalog.field_spec(move.product, move.resource, name) or {}) for name in fields]
        return [(spec["label"], spec) for _, spec in specs if spec.get("options") and spec.get("label")]

    def row_shows(self, ident: str, text: str) -> bool:
        """Whether the list row that shows ``ident`` shows ``text`` too (a status reached)."""
        elements = self.page.elements if self.page else []
        return any(ident in shown and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", shown)
                   for _, shown in data_rows(elements))

    async def clear_dependents(self, follower: Follower, step: Step, act: DocAction, kind: tuple[str, str],
                               sentence: str) -> AsyncIterator[Action]:
        """The step deletes a resource, and the prerequisite says what must go first ("The
        VPC contains no vSwitches", "delete the ENI first"): the catalog's dependents of
        that kind deleted from their own list, those that show the resource's ID (or
        that the sentence names), then back to the resource's list for the doc's step."""
        page = self.page
        label = normalize(act.path[-1] if act.path else act.target or "")
        delete = next((a for a in self.known.row_actions if (a.product, a.resource) == kind
                       and normalize(a.label) == label and self.op_kind(a) == "delete"), None)
        if page is None or delete is None:
            return
        for dependent in self.known.dependents(*kind):
            if (kind, dependent.rtype) in self.cleared or not says(sentence, dependent.noun):
                continue
            if not (says(sentence, dependent.remove.label) or re.search(rf"\bno\s+{re.escape(dependent.noun)}",
                                                                         sentence, re.IGNORECASE)):
                continue
            row = self.row_for(follower, step, act, kind, sentence)
            ident = row_ident(page.elements, row) if row is not None else None
            back = self.known.nav_path(*kind)
            if ident is None or not back:
                return
            self.cleared.add((kind, dependent.rtype))
            noun, held = in_text(dependent.noun), self.noun(act, kind)
            names = [ident, *self.names(sentence)]
            async for action in self.open_list(follower, step, act, dependent.path,
                                               f"Doc: {self.task.resolve(sentence)} Open '{dependent.path[-1]}'."):
                yield action
            for _ in range(MAX_CHILDREN):
                elements = self.page.elements if self.page else []
                held_rows = [row for row, text in data_rows(elements) if any(name in text for name in names)]
                own = next((i for row in held_rows if (i := row_ident(elements, row)) not in (None, ident)), None)
                if own is None:
                    break
                async for action in self.on_row(step, own, dependent.remove,
                                                f"{own} is a {noun} of the {held} {ident}: '{dependent.remove.label}'."):
                    yield action
                async for action in self.confirm(follower, step, act, dependent.remove):
                    yield action
                if self.page is not None and any(own in text for _, text in data_rows(self.page.elements)):
                    break  # not deleted: nothing more to do here
            async for action in self.open_list(follower, step, act, back,
                                               f"The {held} has no {noun} left: back to '{back[-1]}'."):
                yield action
            return

    async def open_list(self, follower: Follower, step: Step, act: DocAction, path: list[str],
                        thought: str) -> AsyncIterator[Action]:
        """A list page through the left-side navigation: its item, with its group only where
        the item is not shown by itself."""
        go = path[-1:] if self.shows(path[-1]) else path
        async for action in self.own(follower.follow_action(step, DocAction(Intent.NAVIGATE, act.line, path=go)),
                                     thought):
            yield action

    def row_for(self, follower: Follower, step: Step, act: DocAction, kind: tuple[str, str],
                sentence: str = "") -> Element | None:
        """The list row of the resource a doc action acts on: the one showing a name the
        step or the sentence gives it, else the follower's (this run's resource of that kind)."""
        if self.page is None:
            return None
        rows = data_rows(self.page.elements)
        for name in self.names(f"{step.text} {sentence}"):
            row = next((r for r, text in rows if name in text), None)
            if row is not None:
                return row
        return follower.row_of(replace(act, resource=act.resource or kind[1].replace("_", " ")))

    async def on_row(self, step: Step, ident: str, move: RowAction, thought: str) -> AsyncIterator[Action]:
        """``move`` taken on the list row that shows ``ident``: its menu, then its control,
        each clicked in that row (found again on each page); nothing once one is missing
        or disabled."""
        for item in [*move.menu, move.label]:
            elements = self.page.elements if self.page else []
            row = next((r for r, text in data_rows(elements) if ident in text), None)
            control = next((e for e in elements if row is not None and within(e, row) and e.ref
                            and e.role in ("button", "menuitem", "link") and normalize(e.name) == normalize(item)), None)
            if control is None or "disabled" in control.attributes:
                return
            yield Action(ActionKind.CLICK, ref=control.ref, target=f"{control.role} '{control.name}'",
                         step=step.number, by="oracle", thought=cut(thought))

    @staticmethod
    def wait(step: Step, text: str, thought: str) -> Action:
        """Wait until the page shows ``text`` (a status the console reaches in a while)."""
        return Action(ActionKind.WAIT_FOR, value=text, target=f"'{text}' on the page", step=step.number,
                      by="oracle", thought=cut(thought))

    async def add_child(self, follower: Follower, step: Step, act: DocAction, kind: tuple[str, str],
                        sentence: str) -> AsyncIterator[Action]:
        """The prerequisite describes a child resource by its attributes ("an inbound rule
        that allows Custom TCP traffic on port range 8080/8080 from 10.0.0.0/8") that no
        row of the list shows: created with the catalog's create form, those values entered."""
        res = self.known.catalog.resource(*kind)
        create = res.get("create") or {}
        if not res.get("parent") or not create.get("button") or not name_words(self.noun(act, kind)) <= name_words(sentence):
            return
        values = self.described_values(kind, sentence)
        shown = [value for name, value in values if self.is_text(kind, name)]
        if not shown or any(all(value in text for value in shown) for _, text in data_rows(self.page.elements if self.page else [])):
            return
        if not self.shows(create["button"]):
            return
        noun = res.get("singular", kind[1]).lower()
        self.handled.add(sentence)
        async for action in self.own(follower.follow_action(step, DocAction(Intent.CLICK, act.line, target=create["button"])),
                                     f"No row is the {noun} the doc needs: '{create['button']}' first."):
            yield action
        for name, value in values:
            label = self.known.catalog.field_spec(*kind, name)["label"]  # type: ignore[index]
            async for action in self.own(follower.follow_action(step, DocAction(Intent.FILL, act.line, target=label,
                                                                                value=value)),
                                         f"The prerequisite's {noun} has {label} {value}."):
                yield action
        submit = create.get("submit") or CONFIRMS[0]
        async for action in self.own(follower.follow_action(step, DocAction(Intent.CLICK, act.line, target=submit)),
                                     f"Save the {noun}: '{submit}'."):
            yield action
        yield Action(ActionKind.WAIT_FOR, value=shown[0], target=f"'{shown[0]}' on the page", step=step.number,
                     by="oracle", thought=cut(f"Wait until the list shows the {noun} ({shown[0]})."))

    def described_values(self, kind: tuple[str, str], sentence: str) -> list[tuple[str, str]]:
        """The create form's values a sentence gives (its fields in order): an option
        the sentence names, a word that matches a field's pattern or is a CIDR block."""
        res = self.known.catalog.resource(*kind)
        tokens = [t.strip(".,;:()`'\"") for t in sentence.split()]
        tokens = [t for t in tokens if t and "<" not in t]
        out = []
        for name in (res.get("create") or {}).get("fields") or ():
            spec = self.known.catalog.field_spec(*kind, name) or {}
            if spec.get("options"):
                named = [label for label in spec["options"].values() if says(sentence, label)]
                if named:
                    out.append((name, max(named, key=len)))
            elif self.is_text(kind, name):
                pattern = re.compile(spec["pattern"]) if spec.get("pattern") else CIDR
                found = next((t for t in tokens if pattern.fullmatch(t)), None)
                if found is not None:
                    out.append((name, found))
        return out

    def is_text(self, kind: tuple[str, str], name: str) -> bool:
        """Whether a field is typed text that identifies a row: one with a pattern, or a CIDR block."""
        spec = self.known.catalog.field_spec(*kind, name) or {}
        return not spec.get("options") and (spec.get("type") == "cidr" or (spec.get("type") == "text" and bool(spec.get("pattern"))))

    def known_values(self, rtype: str) -> list[str]:
        """Names, IDs and addresses the run knows of resources of ``rtype`` (the task context)."""
        words = name_words(rtype)
        return [value for key, value in self.task.context.items()
                if value and len(value) > 2 and (match := CONTEXT_KEY.match(key)) and words <= set(match["type"].split("_"))]

    async def dismiss(self, follower: Follower, step: Step, act: DocAction) -> AsyncIterator[Action]:
        """Close a dialog still open over the page (the refused one)."""
        page = self.page
        dialogs = [e for e in page.elements if e.role in ("dialog", "alertdialog") and e.ref] if page else []
        if not dialogs or page is None:
            return
        close = next((e for e in page.elements if within(e, dialogs[-1]) and e.role == "button"
                      and normalize(e.name) in ("cancel", "close", "取消", "关闭")), None)
        if close is not None:
            async for action in self.own(follower.follow_action(step, DocAction(Intent.CLICK, act.line, target=close.name)),
                                         "Close the refused dialog."):
                yield action

    @staticmethod
    def row_doc_action(act: DocAction, move: RowAction) -> DocAction:
        """The doc action that takes ``move`` on the row ``act`` names: its menu path, else its label."""
        if move.menu:
            return DocAction(Intent.NAVIGATE, act.line, path=[*move.menu, move.label], resource=act.resource)
        return DocAction(Intent.CLICK, act.line, target=move.label, resource=act.resource)

    async def confirm(self, follower: Follower, step: Step, act: DocAction, move: RowAction) -> AsyncIterator[Action]:
        """``move``'s dialog confirmed: its button (a form's ``ok``), then a second confirmation it asks for."""
        ok = move.dialog.get("ok") or next((c for c in CONFIRMS if self.shows(c)), CONFIRMS[0])
        async for action in self.own(follower.follow_action(step, DocAction(Intent.CONFIRM, act.line, target=ok)),
                                     f"Confirm '{move.dialog.get('title', move.label)}' with '{ok}'."):
            yield action
        again = move.dialog.get("confirm_ok")
        if again and self.shows(again):
            async for action in self.own(follower.follow_action(step, DocAction(Intent.CONFIRM, act.line, target=again)),
                                         f"Confirm again with '{again}'."):
                yield action

    async def not_ready(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        """A row's control disabled in the row's status: the catalog's transitions to
        a status that offers it, each confirmed and waited for, then the control."""
        act = stuck.action
        if act is None or self.depth >= MAX_DEPTH or self.page is None:
            return
        label = stuck.finding.expected
        row = follower.row_of(act) or row_holding(self.page.elements, label)
        if row is None:
            return
        text = " ".join(e.name for e in self.page.elements if within(e, row) and e.name)
        found = self.known.detour(label, text, self.task.procedure.product)
        if found is None:
            return
        target, chain, status = found
        noun = act.resource or target.resource.replace("_", " ")
        self.depth += 1
        try:
            need = " or ".join(target.statuses.get(s, s) for s in target.when)
            yield Action(ActionKind.FLAG_STEP, finding=stuck.finding, step=stuck.step.number, by="oracle",
                         thought=cut(f"'{label}' is disabled: {noun} is {target.statuses.get(status, status)}, "
                                     f"needs {need}."))
            for move in chain:
                async for action in self.row_action(follower, stuck.step, act, noun, move, label):
                    yield action
            async for action in self.own(follower.follow_action(stuck.step, replace(act, resource=act.resource or noun)),
                                         f"The {noun} is ready now: do the doc's '{label}'."):
                yield action
        finally:
            self.depth -= 1

    async def row_action(self, follower: Follower, step: Step, act: DocAction, noun: str, move: RowAction,
                         wanted: str) -> AsyncIterator[Action]:
        """One transition on the row: its control (through its menu), its dialog, its new status."""
        status = move.statuses.get(move.to or "", move.to or "")
        why = f"Doc's '{wanted}' needs it: '{move.label}' first, to make the {noun} {status}."
        row_act = DocAction(Intent.NAVIGATE if move.menu else Intent.CLICK, act.line,
                            target=None if move.menu else move.label, path=[*move.menu, move.label] if move.menu else [],
                            resource=act.resource or noun)
        async for action in self.own(follower.follow_action(step, row_act), why):
            yield action
        async for action in self.confirm(follower, step, act, move):
            yield action
        if status:
            yield Action(ActionKind.WAIT_FOR, value=status, target=f"'{status}' on the page", step=step.number,
                         by="oracle", thought=cut(f"Wait until the {noun} shows '{status}'."))

    # -- shared

    def shows(self, label: str) -> bool:
        """Whether the page has an element named ``label`` (exactly or normalized)."""
        if self.page is None:
            return False
        found = locate(label, [e for e in self.page.elements if e.name], None)
        return found.element is not None and found.kind is not None and found.kind.value != "close"

    @staticmethod
    async def own(actions: AsyncIterator[Action], thought: str) -> AsyncIterator[Action]:
        """The follower's actions for a doc action the oracle wrote: the oracle's, with its Thought."""
        async for action in actions:
            action.by = "oracle"
            if action.thought is None:
                action.thought = cut(thought if action.kind.touches_page else f"{thought} {action.describe()}")
            yield action


def listing_tab(parent: dict[str, Any], child: dict[str, Any]) -> str | None:
    """The tab of the parent's page that lists ``child``'s rows ("Files" for objects,
    "SNAT Management" for SNAT entries): its title, else the one sharing a word with it."""
    tabs = (parent.get("detail") or {}).get("tabs") or []
    named = [t for t in tabs if normalize(t) == normalize(child.get("title", ""))]
    words = name_words(child.get("title", "")) | name_words(child.get("singular", ""))
    return next(iter(named), None) or next((t for t in tabs if name_words(t) & words), None)


def in_text(noun: str) -> str:
    """A catalog noun as a sentence writes it: "Security Group" -> "security group"; "ENI", "VSwitch" kept."""
    return " ".join(word.lower() if word[1:].islower() else word for word in noun.split())


def names_in(text: str) -> list[str]:
    """The resource names a doc's text gives: hyphenated words with the run's placeholder
    or a number ("legacy-web-<suffix>", "launch-advisor-20210101"), not "pay-as-you-go"."""
    words = [w.strip(".,;:()`'\"*") for w in text.split()]
    return [w for w in words if NAME.match(w) and re.search(r"[<\d]", w)]


def row_ident(elements: Sequence[Element], row: Element) -> str | None:
    """The ID a list row shows (its ID link's, else the first ID-like word)."""
    link = resource_link(elements, row, "id")
    if link is not None and ID_LIKE.match(link.name.strip()):
        return link.name.strip()
    return next((w for w in row_text(elements, row).split() if ID_LIKE.match(w)), None)


def row_holding(elements: Iterable[Element], label: str) -> Element | None:
    """The list row holding a disabled control named ``label``."""
    elements = list(elements)
    for element in elements:
        if element.name and normalize(element.name) == normalize(label) and "disabled" in element.attributes:
            rows = [e for e in elements if e.role == "row" and e.ref and e.ref in element.parents]
            if rows:
                return rows[-1]
    return None


def cut(text: str) -> str:
    """``text`` on one line, at most :data:`THOUGHT_CHARS` characters."""
    return one_line(text, THOUGHT_CHARS)
