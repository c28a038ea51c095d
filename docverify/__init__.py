"""docverify: documentation CI for cloud consoles.

It parses Markdown how-to procedures into task specs, executes them in a real
browser against a console, and reports drift step by step on the doc's own lines.
"""

__version__ = "0.1.0"
