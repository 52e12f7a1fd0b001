import shutil
import subprocess

sentinel = object()


def run_formatters(written_files, black_path=sentinel):
    """Runs the black formatter on the files a command wrote."""
    if black_path is sentinel:
        black_path = shutil.which("black")
    if black_path:
        subprocess.run([black_path, "--fast", "--", *written_files], capture_output=True)
