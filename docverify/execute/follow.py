"""Following a doc, with a delegate for the steps that cannot be followed as written.

A :class:`FollowingPolicy` (the ``literal`` policy) follows the doc's steps itself. Its
episode can be started with a :class:`Delegate`, which it asks wherever a step cannot
be followed as written (:meth:`Delegate.stuck`), has no literal action
(:meth:`Delegate.unverifiable`), or an action of the page failed
(:meth:`Delegate.halts_on`); it also tells the delegate every observation and every
action it answers. The delegate's defaults are the follower's own handling, so a
delegate overrides only what it takes over (the ``hybrid`` policy's model). What a
delegate may use of the episode is :class:`Follower`. Both sides are asked for by
name (:func:`get_follower`): no plugin imports another.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Protocol

from docverify.check.verdict import Finding, FindingKind
from docverify.cost import Usage
from docverify.errors import ConfigError
from docverify.execute.actions import Action, Observation
from docverify.execute.policy import Episode, Policy
from docverify.parse.model import Action as DocAction
from docverify.parse.model import Step
from docverify.registry import naming
from docverify.task import Task

__all__ = ["Delegate", "Follower", "FollowerName", "FollowingPolicy", "Stuck", "get_follower"]


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

    def flag_stuck(self, stuck: Stuck) -> AsyncIterator[Action]:
        """The follower's own handling of ``stuck``: flag it, and block when the rest
        depends on it (or end as not ready when a prerequisite is missing)."""
        ...

    def flag_unverifiable(self, step: Step, reason: str) -> AsyncIterator[Action]:
        """The follower's own handling of a step with no literal action: flag it
        ``not_verifiable`` (no defect)."""
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
