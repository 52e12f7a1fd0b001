import os
import sys

CONFIG = os.path.join(os.path.dirname(__file__), "defaults.py")


def main() -> None:
    with open(CONFIG) as handle:
        exec(handle.read())


if __name__ == "__main__":
    main()
