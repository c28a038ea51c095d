"""Stage 6, report: the results of a run and the contract of the reporters.

:mod:`~docverify.report.trajectory` holds what a run produces (each procedure's
turns, steps, verdict and usage; the run's summary); :class:`~docverify.report.reporter.Reporter`
presents it (terminal, JSON, JUnit, GitHub, html plugins).
"""
