"""Issues 15 and 17: a worker process stays cheap. Importing what a worker imports must not
pull in the coordinator, the model broker or jsonschema (the package's public names load
lazily), and the public names still resolve."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HEAVY = ("fleetledger.coordinator", "fleetledger.model_broker", "jsonschema")


def loaded_after(statement: str) -> set[str]:
    """Runs ``statement`` in a fresh interpreter on this checkout; returns the modules it loaded."""
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize("module", ["fleetledger.worker", "fleetledger.jobs.scan.tasks", "fleetledger.jobs.synthetic"])
def test_worker_side_imports_stay_light(module: str) -> None:
    loaded = loaded_after(f"import {module}")
    assert module in loaded
    assert not loaded & set(HEAVY), f"import {module} loaded {sorted(loaded & set(HEAVY))}"


def test_public_names_load_on_first_use() -> None:
    import fleetledger

    for name in fleetledger.__all__:
        assert getattr(fleetledger, name) is not None, name
    assert set(fleetledger.__all__) <= set(dir(fleetledger))
    assert fleetledger.Coordinator is __import__("fleetledger.coordinator", fromlist=["x"]).Coordinator
    assert fleetledger.effect is __import__("fleetledger.effects", fromlist=["x"]).perform
    with pytest.raises(AttributeError):
        fleetledger.NoSuchName  # noqa: B018
    loaded = loaded_after("from fleetledger import Coordinator, open_storage, fold, __version__")
    assert "fleetledger.coordinator" in loaded
