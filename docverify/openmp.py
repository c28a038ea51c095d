"""OpenMP's threads next to the browser: the one setting local models and training share."""

from __future__ import annotations

import os


def share_cores() -> None:
    """Have OpenMP's idle threads sleep instead of spin (``OMP_WAIT_POLICY=PASSIVE``), unless
    the environment already names a policy.

    A local model (llama.cpp) and training (PyTorch) run OpenMP threads on cores that the
    browser, the console and other processes (a second job on a shared runner, a test
    suite's other worker) want too. By default a thread that finished its share of a
    parallel region spins for its next work, holding its core: beside two busy processes a
    `check --jobs 2` turn's model call took 12.7 s spinning and 9.9 s sleeping; alone, the
    two are alike (6.2 and 6.1 s; ``benchmark/model_bench.py --part openmp``,
    ``benchmark/results/models.md``). The runtime reads the setting once, when it is loaded
    (llama.cpp and PyTorch load one and the same ``libgomp.so.1``): the CLI calls this
    first, the llama.cpp engine before its import (too late once PyTorch is imported).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
