"""Following a doc, with a delegate for the steps that cannot be followed as written.

A :class:`FollowingPolicy` (the ``literal`` policy) follows the doc's steps itself. Its
episode can be started with a :class:`Delegate`, which it asks wherever a step cannot
be followed as written (:meth:`Delegate.stuck`), has no literal action
(:meth:`Delegate.unverifiable`), an action of the page failed
(:meth:`Delegate.halts_on`), or a step's control is disabled for the resource it acts
on (:meth:`Delegate.not_ready`), and before each step (:meth:`Delegate.before_step`);
it also tells the delegate every observation and every action it answers. The
delegate's defaults are the follower's own handling, so a delegate overrides only what
it takes over (the ``hybrid`` policy's model, the ``oracle``'s release knowledge). What
a delegate may use of the episode is :class:`Follower`. Both sides are asked for by
name (:func:`get_follower`): no plugin imports another. A policy made of a follower and
a delegate of its own takes :class:`DelegatingOptions` and :class:`Delegating`.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Protocol

from pydantic import ConfigDict, PrivateAttr, model_validator
from pydantic import Field as Option

from docverify.check.verdict import Finding, FindingKind
from docverify.cost import Usage
from docverify.errors import ConfigError
from docverify.execute.actions import Action, Observation
from docverify.execute.locate import Element
from docverify.execute.policy import Episode, Policy
from docverify.parse.model import Action as DocAction
from docverify.parse.model import Step
from docverify.registry import naming
from docverify.task import Task

__all__ = ["Delegate", "Delegating", "DelegatingOptions", "Follower", "FollowerName", "FollowingPolicy", "Stuck",
           "get_follower"]


@dataclass
class Stuck:
    """A doc action that cannot be followed as written."""

    step: Step
    action: DocAction | None
    finding: Finding
    fatal: bool  #: whether the rest of the procedure depends on it


class Follower(Protocol):
    """What a delegate may use of the episode that follows the doc."""

    task: Task
    usage: Usage
    observation: Observation | None  #: the latest; after each action yielded, the page it led to

    def finding(self, step: Step, line: int, kind: FindingKind, expected: str, observed: str,
                candidates: Sequence[str] = ()) -> Finding:
        """A finding on ``line`` of ``step``, in the procedure's file."""
        ...

    def missing_prerequisite(self, stuck: Stuck) -> bool:
        """Whether ``stuck`` is explained by a resource the environment lacks (an empty
        list where the step acts on an existing item), not by the doc."""
        ...

    def block(self, reason: str) -> None:
        """End the episode blocked after the current step, saying ``reason``."""
        ...

    def follow_action(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        """``act`` followed as if ``step`` said it (a doc action the delegate wrote:
        the doc's label as the console now names it, a step the doc lacks)."""
        ...

    def row_of(self, act: DocAction) -> Element | None:
        """The list row of the existing resource ``act`` acts on, if it names one."""
        ...

    def flag_stuck(self, stuck: Stuck) -> AsyncIterator[Action]:
        """The follower's own handling of ``stuck``: flag it, and block when the rest
        depends on it (or end as not ready when a prerequisite is missing)."""
        ...

    def flag_unverifiable(self, step: Step, reason: str) -> AsyncIterator[Action]:
        """The follower's own handling of a step with no literal action: flag it
        ``not_verifiable`` (no defect)."""
        ...

    def shown_labels(self, step: Step) -> list[str]:
        """The labels ``step`` names (its bold labels, its fields) that the current page
        shows as written (exactly or normalized; with a dialog open, in the dialog), in
        the doc's order, but a form's own buttons (OK, Next, Save: every dialog has them):
        what tells that the page is where ``step`` begins."""
        ...


class Delegate:
    """Takes the steps a doc-following episode cannot follow as written.

    One delegate serves one episode. Every method has the follower's own behaviour as
    its default, so this class as it is changes nothing."""

    def started(self, follower: Follower) -> None:
        """The episode it serves exists (called once, before the first observation)."""

    def observe(self, observation: Observation) -> None:
        """Each observation, before the follower decides on it."""

    def decided(self, action: Action) -> None:
        """Each action the episode answers, the delegate's own included."""

    def provisioned(self, report: str) -> None:
        """A provisioner created something the procedure lacked (see :meth:`Episode.provisioned`)."""

    def halts_on(self, failed: Action) -> bool:
        """Whether a failed page action the follower would stop on ends the episode
        (False: the delegate sees the error and tries another way)."""
        return True

    async def stuck(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        """The actions for a step that cannot be followed as written; by default the
        follower's own (:meth:`Follower.flag_stuck`)."""
        async for action in follower.flag_stuck(stuck):
            yield action

    async def before_step(self, follower: Follower, step: Step) -> AsyncIterator[Action]:
        """The actions to take before the follower follows ``step`` (what the doc's
        prerequisites say must hold by then); by default none."""
        return
        yield

    async def not_ready(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        """The actions where the step's control is there but disabled for the existing
        resource it acts on (the resource is not in the state the step needs: "Start" on
        a running instance), ending with that control; by default none, and the episode
        ends as not ready (the environment's problem, not the doc's)."""
        return
        yield

    async def unverifiable(self, follower: Follower, step: Step, reason: str) -> AsyncIterator[Action]:
        """The actions for a step with nothing literal to do (free text); by default
        the follower's own (:meth:`Follower.flag_unverifiable`)."""
        async for action in follower.flag_unverifiable(step, reason):
            yield action


class FollowingPolicy(Policy):
    """Base of the policies that follow the doc themselves: an episode can be started
    with a :class:`Delegate` for what they cannot follow (how the ``hybrid`` policy
    adds its model to the ``literal`` one)."""

    def start(self, task: Task, delegate: Delegate | None = None) -> Episode:
        raise NotImplementedError


def get_follower(name: str) -> type[FollowingPolicy]:
    """The following policy registered as ``name``; a PluginError listing the
    installed policies when there is none, a ConfigError when it does not follow
    the doc itself."""
    from docverify.plugins import installed_plugins

    policy = installed_plugins().get("policies", name)
    if not (isinstance(policy, type) and issubclass(policy, FollowingPolicy)):
        raise ConfigError(f"policy {name!r} does not follow the doc itself, so it cannot take a delegate",
                          hint="name a following policy, such as literal")
    return policy


#: An option naming a following policy (the hybrid policy's ``follower``), checked when
#: the configuration is read.
FollowerName = Annotated[str, naming(get_follower)]


class DelegatingOptions(Policy.Options):
    """Options of a policy that follows the doc through a following policy and a delegate
    of its own (``hybrid``, ``oracle``). Keys of its table it does not own are its
    follower's options (``close_threshold`` for ``literal``), validated against the follower's."""

    model_config = ConfigDict(extra="allow")

    follower: FollowerName = Option("literal", description="the policy that follows the doc, by name (a following "
                                                          "policy); keys of this policy's table it does not own are "
                                                          "the follower's options")
    _follower_options: Policy.Options | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _the_followers_options(self) -> "DelegatingOptions":
        # a ValidationError raised here keeps its keys' names: policy.<name>.<key> in the message
        self._follower_options = get_follower(self.follower).Options.model_validate(self.model_extra or {})
        return self

    @property
    def follower_options(self) -> Policy.Options:
        assert self._follower_options is not None
        return self._follower_options


class Delegating:
    """What a policy made of a follower and a delegate shares (its options are
    :class:`DelegatingOptions`): the follower, made once, prepared and closed with it."""

    options: DelegatingOptions
    meter: object

    @functools.cached_property
    def follower(self) -> FollowingPolicy:
        """The policy that follows the doc, with its options."""
        return get_follower(self.options.follower)(self.options.follower_options)

    def prepare_follower(self) -> None:
        self.follower.meter = self.meter
        self.follower.prepare()

    def close_follower(self) -> None:
        if "follower" in self.__dict__:
            self.follower.close()

    def delegate_for(self, task: Task) -> Delegate:
        """The delegate that takes the steps the follower cannot follow in ``task``'s episode."""
        raise NotImplementedError

    def start(self, task: Task) -> Episode:
        return self.follower.start(task, self.delegate_for(task))
