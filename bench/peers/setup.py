"""Creates the peers' virtualenv for ``bench/peers/run.py`` and installs the pinned peers in it.

    python bench/peers/setup.py [--venv .cache/peers-venv]

The peers (durabl, DBOS Transact, LangGraph with its SQLite saver; ``requirements.txt``) live
in their own virtualenv, never among fleetledger's dependencies; fleetledger's own adapter runs
on the interpreter that runs ``run.py``. A peer that cannot be installed is reported by
``run.py`` as missing, never measured in some other way.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_VENV = HERE.parent.parent / ".cache" / "peers-venv"


def python_of(folder: Path) -> Path:
    """Returns the interpreter of the virtualenv at ``folder``."""
    return folder / "bin" / "python"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="Where to create it (default %(default)s).")
    args = parser.parse_args()
    if not python_of(args.venv).exists():
        venv.EnvBuilder(with_pip=True).create(args.venv)
    done = subprocess.run([str(python_of(args.venv)), "-m", "pip", "install", "-q", "-r", str(HERE / "requirements.txt")],
                          check=False)
    if done.returncode != 0:
        print(f"pip could not install every peer into {args.venv}; run.py will report the missing ones", file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
