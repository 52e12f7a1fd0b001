"""Which argument of a dangerous call carries the danger, and what a safe value looks like there.

A sink kind names what consumes a value: a shell command line (``shell``), the program slot of
an argument vector (``argv``), SQL text (``sql``), Python source (``code``), serialised bytes
(``data``), an archive whose member names become paths (``archive``) or text marked as safe
HTML, exempt from template escaping (``html``). Sanitisers and
validations are judged per kind: ``shlex.quote`` makes a value safe in a shell line and does
nothing for SQL.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from .tree import SourceTree

SinkKind = Literal["shell", "argv", "sql", "code", "data", "archive", "html", "any"]

_ALNUM = frozenset(string.ascii_letters + string.digits)
SAFE_ALPHABETS: Mapping[SinkKind, frozenset[str]] = {
    # No quote, space, separator, redirection, substitution or glob character.
    "shell": _ALNUM | frozenset("_-./:@,+=%"),
    # Identifiers and numbers only; "-" is excluded because "--" starts a comment.
    "sql": _ALNUM | frozenset("_."),
    # Arithmetic only: without letters, "_" or quotes no name, call or string can be written.
    "code": frozenset(string.digits + "+-*/%(). "),
    # No "<", ">", quote or "&": no tag, attribute or entity can be written.
    "html": _ALNUM | frozenset("_-.,:;@+=/ "),
    # No character set makes a serialised object, an archive or a program name safe.
    "argv": frozenset(),
    "data": frozenset(),
    "archive": frozenset(),
    "any": frozenset(),
}

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "csh", "tcsh", "fish", "ash", "cmd",
                    "powershell", "pwsh"})
SHELL_COMMAND_FLAGS = frozenset({"-c", "/c", "/C", "/k", "/K", "-Command", "-command"})

_SUBPROCESS = frozenset({"run", "call", "check_call", "check_output", "Popen"})
_SHELL_STRING_CALLS = frozenset({
    "os.system", "os.popen", "os.popen2", "os.popen3", "os.popen4", "popen2.popen2",
    "popen2.popen3", "popen2.popen4", "popen2.Popen3", "popen2.Popen4", "commands.getoutput",
    "commands.getstatusoutput", "subprocess.getoutput", "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
})
_EXEC_CALLS = {
    # qualified name -> index of the program argument
    **{f"os.{n}": 0 for n in ("execl", "execle", "execlp", "execlpe", "execv", "execve",
                              "execvp", "execvpe", "posix_spawn", "posix_spawnp", "startfile")},
    **{f"os.{n}": 1 for n in ("spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve",
                              "spawnvp", "spawnvpe")},
    "asyncio.create_subprocess_exec": 0,
}


@dataclass(frozen=True, kw_only=True)
class CommandSink:
    """What a process-starting call runs, as far as the syntax shows.

    Attributes:
        api: The call's name as written or resolved, e.g. ``"subprocess.run"``.
        mode: ``"shell"`` (a command line a shell parses), ``"hidden-shell"`` (an argument
            list that starts a shell with ``-c``), ``"argv"`` (an argument vector run without a
            shell) or ``"program"`` (a string run as the program path, no shell).
        value: The dangerous expression: the command line for the shell modes, the program
            for ``argv``/``program``; None when the program is a fixed word of a template.
        whole_argv: True when ``value`` is an entire argument vector whose program slot the
            syntax does not show, so a tainted value may only be an argument.
        note: A clause for the rationale, e.g. ``"runs '/bin/bash -c <arg 3>' (shell=False)"``.
    """

    api: str
    mode: Literal["shell", "hidden-shell", "argv", "program"]
    value: ast.expr | None
    whole_argv: bool = False
    note: str = ""


def command_sink(tree: SourceTree, call: ast.Call, literal: Callable[[ast.expr], ast.expr]) -> CommandSink | None:
    """Finds the dangerous argument of a call that starts a process.

    Recognises the ``subprocess`` API (with and without ``shell=True``), ``os.system`` and
    friends, the ``os.exec*``/``os.spawn*`` family, asyncio's subprocess helpers, paramiko's
    ``exec_command`` and any call with ``shell=True``. An argument list that runs a shell with
    ``-c`` (``["/bin/bash", "-c", cmd]``) is a shell command line even with ``shell=False``.

    Args:
        tree: The parsed file.
        call: The flagged call.
        literal: Follows a name to the one expression bound to it, if there is exactly one
            (so ``cmd = [...]; run(cmd)`` shows the list); returns its argument otherwise.

    Returns:
        The sink, or None when the call is not a process start this module knows.
    """
    api = tree.qualname(call.func) or tree.segment(call.func, 40)
    short = api.rsplit(".", 1)[-1]
    shell_kw = keyword(call, "shell")
    shell = shell_kw is not None and isinstance(shell_kw, ast.Constant) and bool(shell_kw.value)
    first = call.args[0] if call.args else keyword(call, "args") or keyword(call, "command")
    if api in _SHELL_STRING_CALLS or short == "exec_command" or (shell and first is not None):
        if first is None:
            return None
        target = literal(first)
        if isinstance(target, (ast.List, ast.Tuple)) and target.elts:
            # With shell=True a sequence's first item is the command line; the rest are $0, $1...
            return CommandSink(api=api, mode="shell", value=target.elts[0], note="the first item of the list is the shell command line")
        return CommandSink(api=api, mode="shell", value=first, note="the string is parsed by a shell")
    if api in _EXEC_CALLS:
        index = _EXEC_CALLS[api]
        if len(call.args) <= index:
            return None
        rest = list(call.args[index + 1 :])
        if short.startswith(("execv", "spawnv", "posix_spawn")) and rest:
            vector = literal(rest[0])
            rest = list(vector.elts) if isinstance(vector, (ast.List, ast.Tuple)) else []
        # rest[0] is argv[0], the name the program sees for itself.
        return _argv_sink(api, [call.args[index], *rest[1:]], literal)
    if api.startswith("subprocess.") and short in _SUBPROCESS:
        if first is None:
            return None
        target = literal(first)
        if isinstance(target, (ast.List, ast.Tuple)):
            return _argv_sink(api, list(target.elts), literal)
        if isinstance(target, ast.Call) and tree.qualname(target.func) == "shlex.split" and target.args:
            return _split_sink(api, target.args[0], literal)
        if isinstance(target, (ast.Constant, ast.JoinedStr, ast.BinOp)) or _is_format_call(target):
            return CommandSink(api=api, mode="program", value=first, note="without a shell the whole string is the program path")
        return CommandSink(api=api, mode="argv", value=first, whole_argv=True, note="the argument vector is built elsewhere and run without a shell")
    return None


def _argv_sink(api: str, elements: list[ast.expr], literal: Callable[[ast.expr], ast.expr]) -> CommandSink:
    if not elements or isinstance(elements[0], ast.Starred):
        return CommandSink(api=api, mode="argv", value=elements[0].value if elements else None, whole_argv=True,
                           note="the program comes from an unpacked sequence")
    program = literal(elements[0])
    name = _constant_str(program)
    if name is not None and _is_shell(name):
        for index, element in enumerate(elements[1:-1], start=1):
            flag = _constant_str(literal(element))
            if flag in SHELL_COMMAND_FLAGS:
                return CommandSink(api=api, mode="hidden-shell", value=elements[index + 1],
                                   note=f"the argument list starts the shell {name!r} with {flag!r}, so item {index + 2} is a shell command line even without shell=True")
    return CommandSink(api=api, mode="argv", value=elements[0], note="the arguments are passed to the program without a shell")


def _split_sink(api: str, text: ast.expr, literal: Callable[[ast.expr], ast.expr]) -> CommandSink:
    target = literal(text)
    prefix = _constant_prefix(target)
    tokens = prefix.split()
    if tokens and _is_shell(tokens[0]) and len(tokens) > 1 and tokens[1] in SHELL_COMMAND_FLAGS:
        return CommandSink(api=api, mode="hidden-shell", value=text,
                           note=f"shlex.split yields a {tokens[0]!r} {tokens[1]!r} command line")
    if len(tokens) > 1 or (tokens and prefix[-1:].isspace()):
        return CommandSink(api=api, mode="argv", value=None,
                           note=f"shlex.split fixes the program {tokens[0]!r}; the rest are arguments passed without a shell")
    return CommandSink(api=api, mode="argv", value=text, note="shlex.split output is run without a shell")


def _constant_prefix(expr: ast.expr) -> str:
    """Returns the constant text a command template surely starts with.

    For ``"%s ..." % x`` and ``"{} ...".format(x)`` the text stops at the first placeholder,
    which the formatting replaces.
    """
    current = expr
    cut = ""
    while True:
        if isinstance(current, ast.Constant):
            text = current.value if isinstance(current.value, str) else ""
            return min((text.split(mark, 1)[0] for mark in cut), key=len) if cut else text
        if isinstance(current, ast.JoinedStr):
            head = current.values[0] if current.values else None
            current = head if isinstance(head, ast.Constant) else ast.Constant(value="")
            continue
        if isinstance(current, ast.BinOp) and isinstance(current.op, (ast.Add, ast.Mod)):
            cut += "%" if isinstance(current.op, ast.Mod) else ""
            current = current.left
            continue
        if _is_format_call(current):
            cut += "{"
            current = current.func.value  # type: ignore[attr-defined]
            continue
        return ""


def _is_format_call(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format"


def _is_shell(program: str) -> bool:
    base = program.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    return base in SHELLS


def _constant_str(expr: ast.expr | None) -> str | None:
    return expr.value if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """Finds a keyword argument of a call.

    Args:
        call: The call.
        name: The keyword.

    Returns:
        The argument's value, or None when the call does not pass it.
    """
    for item in call.keywords:
        if item.arg == name:
            return item.value
    return None


# Methods and functions that run SQL text given as their first argument.
SQL_EXECUTORS = frozenset({
    "execute", "executemany", "executescript", "exec_driver_sql", "mogrify", "raw", "extra",
    "RawSQL", "text", "read_sql", "read_sql_query", "fetch", "fetchrow", "fetchval", "query",
    "execute_sql", "run_sql", "select", "prepare",
})
# Calls whose string argument is only shown to people: logging, printing, exceptions.
DISPLAY_CALLS = frozenset({
    "print", "debug", "info", "warning", "warn", "error", "exception", "critical", "log",
    "flash", "echo", "secho", "write", "append", "add_note",
})

SAFE_YAML_LOADERS = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"})
_DESERIALIZERS = {
    "pickle.loads": "pickle", "pickle.load": "pickle", "pickle.Unpickler": "pickle",
    "cPickle.loads": "pickle", "cPickle.load": "pickle", "dill.loads": "dill", "dill.load": "dill",
    "_pickle.loads": "pickle", "_pickle.load": "pickle", "jsonpickle.decode": "jsonpickle",
    "pandas.read_pickle": "pickle", "shelve.open": "shelve", "marshal.loads": "marshal",
    "marshal.load": "marshal", "yaml.load": "yaml", "yaml.load_all": "yaml",
    "yaml.unsafe_load": "yaml", "yaml.unsafe_load_all": "yaml", "yaml.full_load": "yaml",
    "yaml.full_load_all": "yaml",
}


@dataclass(frozen=True, kw_only=True)
class DataSink:
    """A deserialisation call and the data it decodes.

    Attributes:
        api: The call's qualified name, e.g. ``"pickle.loads"``.
        library: ``"pickle"``, ``"marshal"``, ``"yaml"``...
        value: The data (or file) argument.
        safe_loader: For yaml, the name of a safe loader passed to it, else None.
    """

    api: str
    library: str
    value: ast.expr | None
    safe_loader: str | None = None


def data_sink(tree: SourceTree, call: ast.Call) -> DataSink | None:
    """Finds what a deserialisation call decodes.

    Args:
        tree: The parsed file.
        call: The flagged call.

    Returns:
        The sink, or None when the call is not a deserialiser this module knows.
    """
    api = tree.qualname(call.func) or ""
    if api.endswith(".load") and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
        inner = tree.qualname(call.func.value.func) or ""
        if inner.endswith("Unpickler"):
            args = call.func.value.args
            return DataSink(api=inner, library="pickle", value=args[0] if args else None)
    library = _DESERIALIZERS.get(api)
    if library is None:
        return None
    value = call.args[0] if call.args else (keyword(call, "data") or keyword(call, "stream") or keyword(call, "file"))
    safe_loader = None
    if library == "yaml":
        loader = keyword(call, "Loader") or (call.args[1] if len(call.args) > 1 else None)
        loader_name = (tree.qualname(loader) or "").rsplit(".", 1)[-1] if loader is not None else ""
        if loader_name in SAFE_YAML_LOADERS:
            safe_loader = loader_name
    return DataSink(api=api, library=library, value=value, safe_loader=safe_loader)
