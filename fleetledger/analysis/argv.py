"""Which part of an argument vector chooses what runs: the program, or the code a shell or an
interpreter is told to run.

``subprocess.run(["ls", name])`` runs ``ls`` whatever ``name`` is (an argument, not a
command); ``["sh", "-c", line]`` runs ``line`` as a shell command, and ``["env", "X=1",
"python3", "-c", code]`` runs ``code`` as Python. The conventions are the operating system's
and the programs' own (POSIX shells' ``-c`` in a group of short options, ``cmd.exe /c``,
PowerShell's ``-Command``, interpreters' ``-c``/``-e``, wrappers that run the rest of their
arguments as a command), not a library's API nor names chosen by the analysed code.
"""

from __future__ import annotations

from .sequences import positions
from .values import EMPTY, Value, constant, join, with_items

POSIX_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "csh", "tcsh", "fish", "ash", "busybox"})
WINDOWS_SHELLS = frozenset({"cmd"})
POWERSHELLS = frozenset({"powershell", "pwsh"})
# Interpreters and the short option whose argument is code to run.
INTERPRETERS = {"python": "c", "pypy": "c", "perl": "e", "ruby": "e", "node": "e", "nodejs": "e", "php": "r",
                "lua": "e", "tclsh": "", "osascript": "e"}
# Programs that run the rest of their arguments as a command, with the number of operands
# they take before it (after their own options; ``env`` also skips ``NAME=value``).
WRAPPERS = {"env": 0, "sudo": 0, "doas": 0, "nice": 0, "nohup": 0, "setsid": 0, "stdbuf": 0, "time": 0,
            "exec": 0, "xargs": 0, "ionice": 0, "chrt": 1, "timeout": 1, "taskset": 1, "flock": 1, "chroot": 1,
            "runuser": 0, "unshare": 0, "nsenter": 0, "firejail": 0, "strace": 0, "ltrace": 0}
# Programs with options that run a command or a program the option names, or write a file it
# names (GTFOBins; SonarSource's "argument injection vectors"): an argument that outside data
# starts may be read as such an option (CWE-88), unless a "--" before it ends the options.
OPTION_RUNNERS = frozenset({
    "git",       # --upload-pack=CMD, -c core.sshCommand=CMD, --output=FILE (CVE-2022-24439)
    "hg",        # --config=alias.x=!CMD, --debugger (CVE-2023-5752)
    "ssh", "scp", "sftp",  # -oProxyCommand=CMD, -S PROGRAM
    "rsync",     # -e CMD, --rsh=CMD
    "tar",       # --checkpoint-action=exec=CMD, --to-command=CMD, -I PROGRAM
    "zip",       # -TT CMD, --unzip-command=CMD
    "find",      # -exec CMD ;
    "curl",      # -o FILE, -K CONFIG
    "wget",      # -O FILE, --use-askpass=CMD, -e COMMAND
    "sendmail",  # -X LOGFILE, -C CONFIG
    "su",        # -c CMD
    "tcpdump",   # -z CMD (run after each rotation)
})
# Options of those programs whose value (the next argument) is inert data, a number or a name
# that is no path, never read as an option (a short one also ends a group: curl -sd DATA). An
# option whose value is a path (tar -f, curl -o, git -C) is not listed: an attacker who chooses
# it chooses what is read or written, which stays reported. Nor is one whose value is a command,
# a program, options or a configuration (ssh -o, tar -I, curl -K, rsync -e, git -c).
DATA_OPTIONS = {
    "tar": frozenset({"-b", "-N", "-V", "--blocking-factor", "--newer", "--label"}),
    "curl": frozenset({"-d", "-H", "-u", "-X", "-A", "-e", "-b", "-m", "--data", "--header", "--user", "--request",
                       "--user-agent", "--referer", "--cookie", "--max-time", "--url", "-r", "-y", "-Y", "--range",
                       "--connect-timeout", "--retry", "--retry-delay", "--retry-max-time", "--max-filesize",
                       "--limit-rate", "--speed-limit", "--speed-time", "--oauth2-bearer"}),
    "wget": frozenset({"-U", "-t", "-T", "-l", "-A", "-R", "-w", "-Q", "--user-agent", "--header", "--tries", "--timeout",
                       "--level", "--accept", "--reject", "--wait", "--quota", "--limit-rate", "--referer", "--http-user",
                       "--http-password"}),
    "git": frozenset({"-b", "-m", "--depth", "--branch", "--message"}),
    "ssh": frozenset({"-p", "-l", "-b", "-c", "-L", "-R", "-D", "-W", "-m", "-e", "-Q"}),
    "scp": frozenset({"-P", "-l", "-c"}),
}
# Arguments that end a program's options ("--end-of-options": git's, for revisions).
_END_OF_OPTIONS = frozenset({"--", "--end-of-options"})
# Options of shells and interpreters that take a value as the next argument.
_OPTIONS_WITH_VALUE = frozenset({"-o", "+o", "-O", "+O", "-W", "-X", "--rcfile", "--init-file"})
# Options of wrappers that take a value as the next argument.
# Options of each wrapper that take a value as the next argument (their manual pages): one
# program's flag is another's option with a value (sudo's -n runs non-interactively; nice's -n
# takes the niceness).
_WRAPPER_OPTIONS_WITH_VALUE = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--host",
                       "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xargs": frozenset({"-I", "-n", "-d", "-L", "-P", "-s", "-a", "-E", "--max-args", "--delimiter", "--max-lines",
                        "--max-procs", "--max-chars", "--arg-file", "--eof", "--replace"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "exec": frozenset({"-a"}),
    "runuser": frozenset({"-u", "-g", "-G", "-s", "--user", "--group", "--supp-group", "--shell"}),
    "unshare": frozenset({"-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd"}),
    "nsenter": frozenset({"-t", "-S", "-G", "-r", "-w", "--target", "--setuid", "--setgid", "--root", "--wd"}),
    "strace": frozenset({"-o", "-p", "-e", "-s", "-u", "-E", "-P", "-b", "-I", "-O", "-S", "-U", "-X", "-a"}),
    "ltrace": frozenset({"-o", "-p", "-e", "-u", "-n", "-s", "-a", "-A", "-D", "-F"}),
}
# Wrapper options that run a command line through a shell: all that follows (sudo -s, -i),
# or the option's value (runuser -c, flock -c, su -c, env -S, whose value is split into the command).
_WRAPPER_SHELL_REST = {"sudo": frozenset({"-s", "-i", "--shell", "--login"})}
_COMMAND_OPTIONS = {"runuser": frozenset({"-c", "--command"}), "flock": frozenset({"-c", "--command"}),
                    "su": frozenset({"-c", "--command"}), "env": frozenset({"-S", "--split-string"}),
                    # git -c core.pager=CMD, alias.x=!CMD, core.sshCommand=CMD: a setting that runs a command
                    "git": frozenset({"-c"})}
# ssh runs what follows its destination as one command line in the remote user's shell; its
# options that take a value.
_SSH_OPTIONS_WITH_VALUE = frozenset({"-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O",
                                     "-o", "-p", "-Q", "-R", "-S", "-W", "-w"})
# Programs whose first operand is a program in their own language (awk's system(), sed's e
# command), unless an option gives it (its value is then the program) or names a file holding it.
_SCRIPTED = {"awk": (frozenset({"-F", "-v", "--field-separator", "--assign"}), frozenset({"-e", "--source"}),
                     frozenset({"-f", "--file"})),
             "sed": (frozenset({"-l", "--line-length"}), frozenset({"-e", "--expression"}), frozenset({"-f", "--file"}))}
_SCRIPTED_NAMES = {"awk": "awk", "gawk": "awk", "mawk": "awk", "nawk": "awk", "sed": "sed", "gsed": "sed"}


def program_index(items: list[Value]) -> int | None:
    """Where the program a vector runs is, wrappers skipped; None when it is not a constant."""
    start: int | Value | None = 0
    while isinstance(start, int) and start < len(items):
        program = items[start]
        if not (program.is_const and isinstance(program.const, str)):
            return None
        name = base_name(program.const)
        if name not in WRAPPERS:
            return start
        start = _after_wrapper(items, start + 1, name)
    return None


def program_part(value: Value) -> Value:
    """Returns the part of an argument vector (a list or tuple the engine knows item by item)
    that chooses what runs: the program, or the command line or code given to a shell or an
    interpreter; a string is itself the program (or a shell command).

    Args:
        value: The vector as the engine knows it.

    Returns:
        The values that choose what runs (joined); items the engine cannot read (not
        constant, not outside data) make the rest of the vector count, since they may be a
        shell's ``-c``.
    """
    if value.items is None:
        return value
    items = vector(value)
    if not items:
        return value.flatten()
    return _run_by(items, 0)


def option_part(value: Value) -> tuple[Value, str]:
    """Returns the items of an argument vector that a program in ``OPTION_RUNNERS`` may read as
    its own options although the code means them as operands: each item that does not start
    with a constant text (``"https://" + host`` cannot start with ``-``; ``"--depth=" + n``
    stays that option), before a ``"--"`` that ends the options. Wrappers (``sudo``,
    ``timeout``, ``env``) are skipped to the program they run.

    Args:
        value: The vector as the engine knows it (a list or tuple known item by item, the
            program and any wrapper before it constants; anything else gives nothing).

    Returns:
        The items so placed, joined (``EMPTY`` when there are none), and the program's name.
    """
    if value.items is None:
        return EMPTY, ""
    items = vector(value)
    if not items:
        return EMPTY, ""
    first = items[0]
    if not first.is_const and first.choices and all(isinstance(c, str) for c in first.choices):
        # a program chosen among constants (``[vcs, "clone", url]``, ``vcs`` git or hg): each
        found = [option_part(with_items(value, {0: constant(choice)})) for choice in sorted(first.choices)]
        reached = [(part, name) for part, name in found if part is not EMPTY]
        return (join(*(part for part, _ in reached)), reached[0][1]) if reached else (EMPTY, "")
    start = program_index(items)
    if start is None:
        return EMPTY, ""
    program = items[start]
    if base_name(str(program.const)) not in OPTION_RUNNERS:
        return EMPTY, ""
    reached: list[Value] = []
    # an inert value, or one the command sink reports (git -c's setting): no option either way
    data_options = DATA_OPTIONS.get(base_name(program.const), frozenset()) | _COMMAND_OPTIONS.get(
        base_name(program.const), frozenset())
    value_next = False
    for item in items[start + 1:]:
        assert item is not None
        if value_next:  # the value of the option before it (``tar -xf NAME``), read as data
            value_next = False
            continue
        if item.is_const:
            if item.const in _END_OF_OPTIONS:
                break
            text = str(item.const)
            value_next = text in data_options or (text.startswith("-") and not text.startswith("--") and len(text) > 2
                                                  and f"-{text[-1]}" in data_options)
            continue
        if item.prefix:
            continue  # starts with a constant: the code chose whether it is an option
        reached.append(item)
    return (join(*reached) if reached else EMPTY), program.const


def started_vector(program: Value, args: list[Value], start: int) -> Value:
    """The vector a program started by path runs with, its path first: ``os.execv(path,
    ["sh", "-c", line])`` and ``os.execl(path, "sh", "-c", line)`` give ``[path, "-c",
    line]`` (the vector's first item only names the program).

    Args:
        program: The path of the program started.
        args: The call's positional arguments.
        start: Where the vector starts: a list or tuple the engine knows item by item there
            (and nothing but an environment after it), or the arguments from there on.

    Returns:
        A vector value: the program, then the vector's items where the engine knows them one
        by one, else everything the vector holds as one item.
    """
    rest = args[start:]
    if not rest:
        return program
    first = rest[0]
    if first.items is not None and all(isinstance(k, int) for k in first.items):
        known = [first.items.get(i) for i in range(len(first.items))]
        if all(item is not None for item in known):
            return Value(items={i: item for i, item in enumerate([program, *known[1:]])})  # type: ignore[list-item]
    if first.items is not None or len(rest) == 1 and not first.is_const:
        # A vector known only as a whole: what follows the program, all of it in one place.
        return Value(items={0: program, 1: first.flatten()})
    return Value(items={i: item for i, item in enumerate([program, *rest[1:]])})


def listed_vector(program: Value, operands: list[Value], unpacked: list[Value]) -> Value:
    """The vector of a program started with its arguments listed after it:
    ``asyncio.create_subprocess_exec("sh", "-c", line)`` gives ``["sh", "-c", line]``.

    Args:
        program: The program started.
        operands: The positional arguments after it, in order.
        unpacked: The values of ``*args`` in the call, after the operands; each one the engine
            knows item by item adds its items, any other one all it holds as one item.

    Returns:
        A vector value, the program first.
    """
    items = [program, *operands]
    for value in unpacked:
        known = [value.items.get(i) for i in range(len(value.items))] if value.items is not None else [None]
        items.extend(known if all(item is not None for item in known) else [value.flatten()])  # type: ignore[list-item]
    return Value(items=dict(enumerate(items)))


def vector(value: Value) -> list[Value] | None:
    """A vector's items in order, those the engine knows by position, then what the rest holds
    as one more item (``["hg", *cmd]``: ``"hg"``, then ``cmd``, an item that is no constant and
    so counts wherever one may be an option or code); None when its items are not known so."""
    found = positions(value)
    if found is None:
        return None
    known, rest = found
    return known + ([rest] if rest is not None else [])


def _run_by(items: list[Value], start: int) -> Value:
    """What chooses what runs when ``items[start]`` is the program."""
    if start >= len(items):
        return EMPTY
    program = items[start]
    if not (program.is_const and isinstance(program.const, str)):
        # A program the engine cannot name (``"cmd.exe"`` on one branch, ``"sh"`` on another)
        # may be a shell or a wrapper: given what may be a code option next, the rest counts.
        following = items[start + 1] if start + 1 < len(items) else None
        if following is not None and (not following.is_const and not following.tainted() or following.is_const
                                      and isinstance(following.const, str) and _any_code_flag(following.const)):
            return join(program, *items[start + 1:])
        return program
    name = base_name(program.const)
    if name in WRAPPERS:
        after = _after_wrapper(items, start + 1, name)
        return program if after is None else after if isinstance(after, Value) else _run_by(items, after)
    if name in ("su", "git"):
        return join(program, _option_value(items, start + 1, _COMMAND_OPTIONS[name]))
    if name == "ssh":
        return join(program, *_remote_command(items, start + 1))
    if name in _SCRIPTED_NAMES:
        return join(program, _script(items, start + 1, *_SCRIPTED[_SCRIPTED_NAMES[name]]))
    if name in POSIX_SHELLS:
        return _after_option(items, start + 1, "c", program)
    letter = INTERPRETERS.get(name)
    if letter is not None:
        return _after_option(items, start + 1, letter, program) if letter else join(
            program, *items[start + 1:start + 2])
    if name in WINDOWS_SHELLS:
        return _windows_rest(items, start + 1, ("/c", "/k", "/r"), program)
    if name in POWERSHELLS:
        return _windows_rest(items, start + 1, ("-c", "-command", "-encodedcommand", "-ec", "-file", "-f"), program)
    return program


def base_name(path: str) -> str:
    """``/usr/bin/python3.12`` -> ``python``; ``C:\\Windows\\cmd.EXE`` -> ``cmd``."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if name.endswith(".exe"):
        name = name[:-4]
    stripped = name.rstrip("0123456789.")
    return stripped if stripped in INTERPRETERS or stripped in POSIX_SHELLS else name


def _any_code_flag(text: str) -> bool:
    """True for an argument that may tell a shell to run the next one as a command line
    (``-c``, ``-xc``, ``/c``, ``/k``, ``-Command``), after a program the engine cannot name."""
    lowered = text.lower()
    if lowered in ("/c", "/k", "-command", "-encodedcommand"):
        return True
    return lowered.startswith("-") and not lowered.startswith("--") and lowered.endswith("c") and lowered[1:].isalpha()


def _after_option(items: list[Value], index: int, letter: str, program: Value) -> Value:
    """For a POSIX-style program whose option ``-<letter>`` (alone or in a group, ``-xc``)
    makes its first operand code: that operand; without it, the first operand (a script it
    runs) with the program. An item the engine cannot read at an option's place may be that
    option: everything from there counts. The operands after it are the code's own arguments
    (``["sh", "-c", "grep -- \"$1\" f", "sh", pattern]``), not code."""
    coded = False
    while index < len(items):
        item = items[index]
        if not item.is_const:
            if item.prefix and not item.prefix.startswith(("-", "+")):
                break  # it starts with a constant that is no option: the operand
            if item.tainted():
                return join(program, item)  # outside data as an option or a script's path
            return join(program, *items[index:])
        text = str(item.const)
        if text == "--":
            index += 1
            break
        if text in _OPTIONS_WITH_VALUE:
            index += 2
            continue
        if text.startswith("-") and len(text) > 1 and not text.startswith("--"):
            coded = coded or letter in text[1:]
            index += 1
            continue
        if text.startswith("--") or text.startswith("+"):
            index += 1
            continue
        break
    operand = items[index] if index < len(items) else EMPTY
    return operand if coded else join(program, operand)


def _windows_rest(items: list[Value], index: int, flags: tuple[str, ...], program: Value) -> Value:
    """``cmd /c`` and PowerShell's ``-Command`` run the rest of the vector as one command line."""
    for position in range(index, len(items)):
        item = items[position]
        if not item.is_const:
            return join(program, *items[position:])
        if str(item.const).lower() in flags:
            return join(*items[position + 1:]) if position + 1 < len(items) else EMPTY
    return program


def _after_wrapper(items: list[Value], index: int, name: str) -> int | Value | None:
    """The index of the command a wrapper runs (after its options, its operands and, for
    ``env``, ``NAME=value`` settings); a value when an item the engine cannot read stands where
    options end (the rest counts); None when it runs nothing."""
    operands = WRAPPERS[name]
    while index < len(items):
        item = items[index]
        if not item.is_const:
            return join(*items[index:])
        text = str(item.const)
        if text == "--":
            index += 1
            break
        if text in _WRAPPER_SHELL_REST.get(name, ()):
            return join(*items[index + 1:])  # the rest, as a shell's command line
        if text in _COMMAND_OPTIONS.get(name, ()):
            return items[index + 1] if index + 1 < len(items) else None
        if text.startswith("-") and len(text) > 1:
            index += 2 if text in _WRAPPER_OPTIONS_WITH_VALUE.get(name, ()) else 1
            continue
        if name == "env" and "=" in text:
            index += 1
            continue
        if operands:
            operands -= 1
            index += 1
            continue
        break
    return index if index < len(items) else None


def _option_value(items: list[Value], index: int, options: frozenset[str]) -> Value:
    """The values after each of ``options`` the vector writes (``su -c CMD``, ``git -c
    core.pager=CMD``). Outside data that may itself be such an option is an argument injection,
    which ``option_part`` reports."""
    found = [items[i + 1] for i in range(index, len(items) - 1) if items[i].is_const and items[i].const in options]
    return join(*found) if found else EMPTY


def _remote_command(items: list[Value], index: int) -> list[Value]:
    """What ssh runs on the remote host: the items after its options and the destination."""
    while index < len(items):
        item = items[index]
        if not item.is_const:
            return items[index + 1:]  # the destination, perhaps: what follows is the command
        text = str(item.const)
        if text == "--":
            index += 1
            break
        if text.startswith("-") and len(text) > 1:
            index += 2 if text in _SSH_OPTIONS_WITH_VALUE else 1
            continue
        break
    return items[index + 1:]


def _script(items: list[Value], index: int, with_value: frozenset[str], code: frozenset[str],
            files: frozenset[str]) -> Value:
    """The program text an awk or sed is given: the values of its code options, or else its
    first operand (none when an option names a file holding the program)."""
    scripts: list[Value] = []
    first: Value | None = None
    while index < len(items):
        item = items[index]
        text = str(item.const) if item.is_const else None
        if text in code or text in files:
            if text in code and index + 1 < len(items):
                scripts.append(items[index + 1])
            first = first if text in code else EMPTY
            index += 2
            continue
        if text in with_value:
            index += 2
            continue
        if text is not None and text.startswith("-") and len(text) > 1 and text != "-":
            index += 1
            continue
        if first is None:
            first = item
        index += 1
    return join(*scripts) if scripts else first or EMPTY
