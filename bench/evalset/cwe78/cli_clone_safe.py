import argparse
import subprocess


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    args = parser.parse_args()
    subprocess.run(["git", "clone", "--depth", "1", "--", args.repo], check=True)


if __name__ == "__main__":
    main()
