import argparse
import os


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    args = parser.parse_args()
    os.system("git clone --depth 1 " + args.repo)


if __name__ == "__main__":
    main()
