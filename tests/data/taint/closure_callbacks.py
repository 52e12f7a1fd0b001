# Engine probe: a nested function that reads its enclosing function's parameter, passed to a
# module-level helper that calls it (a transaction runner, a retry wrapper): the parameter's
# data reaches the sink inside the callback. The helper's own parameters are not the enclosing
# function's, so applying the helper's summary must leave the closure's label alone.
import sqlite3
import subprocess

FMT = "INSERT INTO t VALUES ('{}')"


def _in_transaction(work):
    connection = sqlite3.connect(":memory:")
    cursor = connection.cursor()
    work(cursor)
    connection.commit()


def _retry(action, times=3):
    for _ in range(times):
        action()


def insert(value):
    def work(cursor):
        cursor.execute(FMT.format(value))  # $ sql
    return _in_transaction(work)


def run(command):
    def action():
        subprocess.call(command, shell=True)  # $ command
    _retry(action)


def constant():
    def work(cursor):
        cursor.execute(FMT.format("fixed"))  # ok sql
    return _in_transaction(work)
