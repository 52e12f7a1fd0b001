import sys


def main() -> None:
    with open(sys.argv[1]) as handle:
        exec(handle.read())


if __name__ == "__main__":
    main()
