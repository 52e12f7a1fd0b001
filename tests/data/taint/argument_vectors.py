# Engine probe: which item of an argument vector chooses what runs (shells' -c in an option
# group, wrappers, interpreters' code options, Windows shells), and which are only arguments.
import shutil
import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.route("/vectors")
def vectors():
    word = request.args["w"]
    subprocess.run(["grep", "-r", word, "/srv"])  # ok command (an argument of grep)
    subprocess.run(["bash", "-xc", f"grep {word} /srv"])  # $ command (-c in a group)
    subprocess.run(["bash", "-o", "pipefail", "-c", "grep " + word])  # $ command (-o takes a value)
    subprocess.run(["sh", "-c", 'grep -- "$1" /srv', "sh", word])  # ok command (a positional parameter of the script)
    subprocess.run(["env", "LC_ALL=C", "sh", "-c", "ls " + word])  # $ command (env runs the rest)
    subprocess.run(["sudo", "-u", "www", "--", "bash", "-c", "ls " + word])  # $ command
    subprocess.run(["timeout", "5", "python3", "-c", "print(" + word + ")"])  # $ command (Python code)
    subprocess.run(["/usr/bin/python3.12", "-I", "-c", word])  # $ command
    subprocess.run(["python3", "-m", "http.server", word])  # ok command (an argument of the module)
    subprocess.run(["perl", "-ne", word, "/srv/log"])  # $ command (-e in a group)
    subprocess.run(["cmd.exe", "/C", "dir", word])  # $ command (cmd runs the rest as one line)
    subprocess.run(["nice", "-n", "10", word])  # $ command (the program nice runs)
    subprocess.run(["nice", "-n", "10", "ls", word])  # ok command
    subprocess.run(["bash", word])  # $ command (the script bash runs)
    return "ok"


@app.route("/configured")
def configured():
    word = request.args["w"]
    tool = shutil.which("grep")
    subprocess.run([tool, "-r", word, "/srv"])  # ok command (an argument after an option that is not a shell's -c)
    subprocess.run([tool, "-c", word])  # $ command (the program may be a shell)
    return "ok"
