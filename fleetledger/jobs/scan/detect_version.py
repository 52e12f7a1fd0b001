"""The identity of the detect step's behaviour, apart from the detectors (``detect``) so that
the coordinator names it in each detect step's key without importing bandit and the engine.

``DETECT_VERSION`` is part of each detect step's input hash, so that a replay never reuses a
report made by other code. What a file yields depends on ``detect`` (bump the leading number
when its logic or default limits change), on bandit's version, on the running Python's parser
(bandit runs only where it parses the file), on the taint engine (``ENGINE_VERSION``) and on
its library models (their content hash).
"""

from __future__ import annotations

import importlib.metadata
import sys

from ...analysis import catalog

ENGINE_VERSION = "7"
DETECT_VERSION = (
    f"detect 5; bandit {importlib.metadata.version('bandit')}; "
    f"python {sys.version_info.major}.{sys.version_info.minor}; "
    f"engine {ENGINE_VERSION}; models {catalog.version()}"
)
