import argparse


def update_catalogs(resources): ...


def lang_stats(resources): ...


def fetch(resources): ...


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("cmd", nargs=1)
    parser.add_argument("-r", "--resources", action="append")
    options = parser.parse_args()
    eval(options.cmd[0])(options.resources)
