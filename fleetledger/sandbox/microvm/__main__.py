"""``python -m fleetledger.sandbox.microvm build``: builds (or refreshes) the cached guest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import DEFAULT_MIRROR, BuildError, BuildOptions, build
from .images import GuestFiles, cache_dir


def main(argv: list[str] | None = None) -> int:
    """Runs the command; returns the exit status (1 when the build fails, with the reason)."""
    parser = argparse.ArgumentParser(prog="python -m fleetledger.sandbox.microvm",
                                     description="Builds the microVM guest of the microvm sandbox.")
    sub = parser.add_subparsers(dest="command", required=True)
    build_parser = sub.add_parser("build", help="build whatever part of the guest is missing or stale")
    build_parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="Debian mirror for debootstrap")
    build_parser.add_argument("--suite", default="", help="Debian suite of the guest (default: the host's)")
    build_parser.add_argument("--rebuild", action="store_true", help="rebuild every part")
    build_parser.add_argument("--cache", default=str(cache_dir()), help="where the guest is kept")
    args = parser.parse_args(argv)
    try:
        build(GuestFiles(root=Path(args.cache)),
              BuildOptions(mirror=args.mirror, suite=args.suite, rebuild=args.rebuild))
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
