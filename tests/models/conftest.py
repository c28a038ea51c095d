"""Tests of the model policies and judges import the fake server from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
