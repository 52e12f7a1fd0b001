# Engine probe: functions run by executors, threads and event loops get the arguments they
# are given, whether the function is a library sink or a function of this module.
import asyncio
import concurrent.futures
import os
import subprocess
import threading
from multiprocessing import Pool

import anyio
from flask import Flask, request

app = Flask(__name__)


def run_it(line, flag=False):
    subprocess.call(line, shell=True)  # $ command (the thread passes it request data)


def harmless(line):
    return len(line)


@app.route("/loop")
async def on_loop():
    text = request.args["t"]
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, eval, text)  # $ code
    await loop.run_in_executor(None, eval, "1 + 1")  # ok code (a constant)
    await asyncio.to_thread(os.system, text)  # $ command
    await loop.subprocess_shell(asyncio.SubprocessProtocol, text)  # $ command
    await asyncio.subprocess.create_subprocess_shell(text)  # $ command
    # What the worker thread's function returns is what the awaited call gives.
    measured = await asyncio.to_thread(harmless, text)
    os.system("sleep " + str(measured))  # ok command (len() of it, a number)
    kept = await anyio.to_thread.run_sync(str.strip, text)
    os.system("echo " + kept)  # $ command
    inside = await anyio.to_thread.run_sync(contained, text)
    return open(inside).read()  # ok path (the function checked it stays in its folder)


def contained(name):
    full = os.path.realpath(os.path.join("/srv/files", name))
    if os.path.commonpath([full, "/srv/files"]) != "/srv/files":
        return "/srv/files/missing"
    return full


@app.route("/pool")
def on_pool():
    text = request.args["t"]
    with concurrent.futures.ThreadPoolExecutor() as workers:
        workers.submit(os.system, text)  # $ command
        workers.submit(harmless, text)
    with Pool(2) as processes:
        processes.apply(os.system, (text,))  # $ command
    return "ok"


@app.route("/thread")
def on_thread():
    text = request.args["t"]
    threading.Thread(target=run_it, args=(text,)).start()
    threading.Thread(target=os.system, args=("uptime",)).start()  # ok command (a constant)
    packed = [text]
    threading.Timer(1.0, os.system, packed).start()  # $ command (the arguments as a list)
    return "ok"


@app.route("/console")
def console():
    import code

    shell = code.InteractiveConsole()
    shell.push(request.args["line"])  # $ code
    code.InteractiveInterpreter().runsource("print(1)")  # ok code (a constant)
    return "ok"
