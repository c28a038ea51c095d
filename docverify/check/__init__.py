"""Stage 5, check: did the procedure reach its goal, and where does the doc drift.

Contracts: :class:`~docverify.check.checker.Checker` and the evidence it weighs;
:mod:`~docverify.check.criteria` (success criteria from the doc and built-in tables);
:mod:`~docverify.check.verdict` (verdicts, findings, exit codes).
"""
