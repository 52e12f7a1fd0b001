"""The identity of the detect step's behaviour, apart from the detectors (``detect``) so that
the coordinator names it in each detect step's key without importing bandit and the engine.

``detect_version()`` is part of each detect step's input hash, so that a replay never reuses a
report made by other code. What a file yields depends on ``detect`` (bump the leading number
when its logic or default limits change), on bandit's version, on the running Python's parser
(bandit runs only where it parses the file), on the taint engine (``ENGINE_VERSION``) and on
its library models (their content hash).
"""

from __future__ import annotations

import functools
import sys

ENGINE_VERSION = "64"


@functools.cache
def detect_version() -> str:
    """Returns the detect step's identity: ``"detect N; bandit V; python X.Y; engine E; models H"``.

    Computed on first use, not at import: it reads bandit's installed version
    (``importlib.metadata``) and hashes the library models, about 20 ms that a worker which
    never keys a detect step (an investigate or triage task) need not pay at start-up.
    """
    import importlib.metadata

    from ...analysis import catalog

    return (f"detect 8; bandit {importlib.metadata.version('bandit')}; "
            f"python {sys.version_info.major}.{sys.version_info.minor}; "
            f"engine {ENGINE_VERSION}; models {catalog.version()}")

