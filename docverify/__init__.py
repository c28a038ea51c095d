"""docverify: documentation CI for cloud consoles.

It parses Markdown how-to procedures into task specs, executes them in a real
browser against a console, and reports drift step by step on the doc's own lines.
"""

import time as _time

__version__ = "0.1.0"

#: when docverify was imported (``perf_counter``): a run's start-up time is counted from here
IMPORTED_AT = _time.perf_counter()
