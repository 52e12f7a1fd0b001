# Engine probe: which item of an argument vector chooses what runs (shells' -c in an option
# group, wrappers, interpreters' code options, Windows shells), and which are only arguments.
import asyncio
import os
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


@app.route("/exec")
def started_by_path():
    word = request.args["w"]
    os.spawnl(os.P_WAIT, "/bin/ls", "ls", "-l", word)  # ok command (an argument of ls)
    os.spawnv(os.P_WAIT, "/bin/sh", ["sh", "-c", "ls " + word])  # $ command (the shell's -c text)
    os.spawnve(os.P_WAIT, "/bin/bash", ["bash", "-xc", word], os.environ)  # $ command
    os.execl("/bin/sh", "sh", "-c", "echo " + word)  # $ command
    listed = ["ls", "-l"] + request.args.getlist("f")
    os.execv("/bin/ls", listed)  # ok command (arguments of ls, however many)
    os.execv(word, ["x"])  # $ command (the program itself)


@app.route("/listed")
async def listed():
    word = request.args["w"]
    await asyncio.create_subprocess_exec("grep", "-r", word, "/srv")  # ok command (an argument of grep)
    await asyncio.create_subprocess_exec("bash", "-c", "ls " + word)  # $ command (the shell's -c text)
    await asyncio.subprocess.create_subprocess_exec("python3", *["-c", word])  # $ command (unpacked, known)
    await asyncio.create_subprocess_exec("ls", *request.args.getlist("f"))  # ok command (arguments of ls)
    loop = asyncio.get_running_loop()
    await loop.subprocess_exec(asyncio.SubprocessProtocol, "sh", "-c", word)  # $ command
    await loop.subprocess_exec(asyncio.SubprocessProtocol, "ls", word)  # ok command
    return "ok"



def _start(vector):
    return subprocess.Popen(vector)  # ok command (its one caller starts git)


def clone(url, folder):
    return _start(["git", "clone", "--", url, folder])


def _launch(vector):
    return subprocess.Popen(vector)  # $ command (the program is the request's)


@app.route("/tool")
def tool():
    _launch([request.args["tool"], "--version"])
    return "started"


@app.route("/options")
def options():
    word = request.args["w"]
    subprocess.run(["git", "clone", word, "/srv/repo"])  # $ argument (--upload-pack=... is an option of git's)
    subprocess.run(["git", "clone", "--", word, "/srv/repo"])  # ok argument (after "--", an operand)
    subprocess.run(["git", "clone", "https://git.example.org/" + word])  # ok argument (starts with a constant)
    subprocess.run(["/usr/bin/ssh", word, "uptime"])  # $ argument (-oProxyCommand=...)
    subprocess.run(["tar", "-x", "-f", "/srv/a.tar", word])  # $ argument (--to-command=... for a member name)
    subprocess.run(["grep", "-e", word, "/srv/log"])  # ok argument (grep's options run nothing)
    subprocess.run(["curl", "-sA", word, "https://example.org/"])  # ok argument (the value of -A, a user agent)
    subprocess.run(["curl", "-o", word, "https://example.org/"])  # $ argument (a path the request chooses to write)
    return "ok"



@app.route("/fetchers")
def fetchers():
    url = request.args["u"]
    subprocess.run(["curl", "-sL", url])  # $ ssrf $ argument (curl fetches its operands)
    subprocess.run(["sudo", "-u", "www", "wget", "-O", "/tmp/page", url])  # $ ssrf $ argument
    subprocess.run(["curl", "--url", url])  # $ ssrf (the value of --url is the URL)
    subprocess.run(["curl", "-sH", url, "https://example.org/"])  # ok ssrf ok argument (a header)
    subprocess.run(["ls", "-l", url])  # ok ssrf (ls fetches nothing)
    os.system("curl -s " + url)  # $ command $ ssrf
    os.system(f"timeout 5 wget -q {url}")  # $ command $ ssrf
    os.system("curl https://api.example.org/v1/" + url)  # $ command $ ssrf (partial: the host is fixed)
    os.system("curl -H 'X-Id: " + url + "' https://example.org/")  # $ command ok ssrf (a quoted header)
    os.system("curl -o " + url + " https://example.org/")  # $ command ok ssrf (where it writes)
    os.system("echo curl " + url)  # $ command ok ssrf (echo prints it)
    os.system("curl https://example.org/; ping " + url)  # $ command ok ssrf (another command)
    subprocess.Popen("wget " + url, shell=True)  # $ command $ ssrf
    os.system("cd /srv && nice -n 10 wget -q " + url)  # $ command $ ssrf (the command after &&)
    os.system("curl -A 'Bot (X11; Linux)' -sSLO " + url)  # $ command $ ssrf (-O takes no value; ; in quotes)
    os.system("curl https://example.org/ > " + url)  # $ command ok ssrf (a file the output goes to)
    os.system("curl --retry " + url + " https://example.org/")  # $ command ok ssrf (the value of --retry)
    subprocess.run(["curl", "--connect-timeout", url, "https://example.org/"])  # ok ssrf ok argument (its value)
    subprocess.run(["sh", "-c", "curl -s -X POST " + url])  # $ command $ ssrf (the command line sh runs)
    os.system(" ".join(["curl", "-s", url]))  # $ command $ ssrf (join keeps the constant start)
    return "ok"

def _mirror(vector):
    return subprocess.run(vector, check=True)  # $ argument (its caller passes a parameter where hg reads options)


def mirror(source, target):
    _mirror(["hg", "clone", source, target])
    _mirror(["hg", "clone", "--", source, target])


@app.route("/checked")
def checked():
    word = request.args["w"]
    if word.startswith("-"):
        return "refused"
    subprocess.run(["git", "clone", word, "/srv/repo"])  # ok argument (cannot start with "-")
    other = request.args["o"]
    if other.startswith(("-", "+")):
        subprocess.run(["git", "clone", other, "/srv/repo"])  # $ argument (only where it does)
    return "ok"


GIT = ["git", "--no-pager"]


@app.route("/built")
def built():
    word = request.args["w"]
    subprocess.run(GIT + ["show", word])  # $ argument (a list joined to a known list)
    extra = ["-t", word]
    subprocess.run(["sendmail", *extra])  # $ argument (a known list unpacked)
    subprocess.run(["sudo", "-u", "deploy", "git", "checkout", word])  # $ argument (the program sudo runs)
    subprocess.run(["timeout", "300", "rsync", "-a", word, "/srv"])  # $ argument
    subprocess.run(["git", "log", "--end-of-options", word])  # ok argument (git's end of options)
    subprocess.run(["zip", "-r", "/tmp/out.zip", os.path.abspath(word)])  # ok argument (starts with /)
    subprocess.run(["git", "checkout", word.lstrip("-")])  # ok argument (no leading dash left)
    subprocess.run(["ls", *extra])  # ok argument (ls runs nothing an option names)
    return "ok"


@app.route("/rest")
def rest():
    words = request.args.getlist("w")
    subprocess.run(["hg", *words])  # $ argument (the program is hg whatever the rest holds)
    subprocess.run(["hg", *words, "--", "/srv/repo"])  # $ argument (the rest's length is not known: no "--" is placed)
    subprocess.run(["ls", *words])  # ok command (however many, arguments of ls)
    subprocess.run(["sh", *words])  # $ command (the rest may be -c and a command)
    vector = ["git", "fetch"]
    vector.extend(words)
    subprocess.run(vector)  # $ argument
    subprocess.run(["git", "pull"] + words)  # $ argument (joined to a known list)
    safe = ["echo"] + words
    safe.append("done")
    subprocess.run(safe)  # ok command (the program stays echo)
    moved = ["echo", *words]
    moved.insert(0, request.args["p"])
    subprocess.run(moved)  # $ command (inserted before the program)
    guarded = ["git", "log"] + words
    guarded.insert(2, "--")
    subprocess.run(guarded)  # ok argument (a "--" put before the rest)
    return "ok"


@app.route("/last")
def last():
    vector = ["git", "clone", "https://git.example.org/repo", "/srv/repo"]
    vector[-1] = request.args["w"]
    subprocess.run(vector)  # $ argument (the last item, replaced)
    subprocess.run(vector[-1:] + ["x"])  # $ command (a slice: the first item may be anything)
    named = ["git", "clone", "--", "x"]
    named[-1] = request.args["w"]
    subprocess.run(named)  # ok argument (after "--")
    shell = ["sh", "-c", "echo hello"]
    shell[-1] = request.args["w"]
    subprocess.run(shell)  # $ command (the -c text, replaced from the end)
    return "ok"


@app.route("/wrapped")
def wrapped():
    words = request.args.getlist("w")
    word = request.args["w"]
    subprocess.run(["sudo", "-n", *words])  # $ command (sudo's -n takes no value: the first word is the program)
    subprocess.run(["env", "-i", *words])  # $ command
    subprocess.run(["nice", "-n", "5", "ls", *words])  # ok command (nice's -n takes the niceness)
    subprocess.run(["sudo", "-s", "ls", word])  # $ command (sudo -s runs the rest through a shell)
    subprocess.run(["su", "-c", "ls " + word, "nobody"])  # $ command (su -c runs its value in a shell)
    subprocess.run(["ssh", "backup.example.org", "ls", word])  # $ command $ argument (the remote shell runs what follows the host; ssh reads options there too)
    subprocess.run(["ssh", "-p", "2222", "backup.example.org", "--", "uptime"])  # ok command
    subprocess.run(["awk", "-F:", word, "/etc/passwd"])  # $ command (awk's program, whose system() runs commands)
    subprocess.run(["awk", "-f", "/srv/report.awk", word])  # ok command (a file to read)
    subprocess.run(["sed", "-e", word, "/srv/log"])  # $ command (a sed script: its e command runs commands)
    subprocess.run(["git", "-c", word, "log"])  # $ command (a setting such as core.pager=CMD runs a command)
    subprocess.run(["git", "clone", "--", word])  # ok command (an operand of git's)
    shell = ["bash"]
    alias = shell
    alias.extend(["-c", word])
    subprocess.run(shell)  # $ command (one list, two names)
    other = ["sh"]
    same = other
    same += words
    subprocess.run(other)  # $ command
    return "ok"
