import sys
import tarfile


def main() -> None:
    tarfile.open(sys.argv[1]).extractall("out", filter="tar")


if __name__ == "__main__":
    main()
