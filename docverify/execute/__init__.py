"""Stage 4, execute: a browser session per procedure, driven by a policy.

Contracts: :class:`~docverify.execute.executor.Executor` (browser lifecycle, sessions),
:class:`~docverify.execute.policy.Policy` (the next action), the data they exchange
(:mod:`~docverify.execute.actions`: actions, observations), and the helpers policies
and executors share: :mod:`~docverify.execute.locate` (finding a doc's label on a
page), :mod:`~docverify.execute.revealed` (secrets a console shows) and
:mod:`~docverify.execute.guard` (what an action does to the console: a dry run's stop,
the protection of what the run did not create).
"""
