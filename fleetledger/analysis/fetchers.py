"""Which operands of a command a program fetches as URLs: curl, wget and their kind fetch the
URLs among their operands, so outside data there chooses where a request goes (SSRF,
CWE-918), whatever else it does as an argument. The conventions are the programs' own (their
manual pages), read from an argument vector or from a shell command line's constant start.

An operand is an argument that is no option and no option's value. Most options of these
programs take a value, so only the options listed in ``_FLAGS`` (which take none) are known to
leave the next argument an operand; after any other option, the next argument is its value
(``--url``'s value is a URL).
"""

from __future__ import annotations

from . import argv
from .values import EMPTY, Value, constant, join

# Programs that fetch the URLs among their operands (their manual pages): outside data there
# chooses where the request goes (CWE-918), whatever else it may do as an argument.
FETCHERS = frozenset({"curl", "wget", "aria2c", "lynx", "w3m", "xh", "http", "https", "yt-dlp", "youtube-dl",
                      "wkhtmltopdf", "wkhtmltoimage"})
# Their options that take no value (curl(1), wget(1), aria2c(1)): the argument after one is
# an operand. Single letters also stand in a group (``-sSL``).
_FLAGS = {
    "curl": frozenset({
        "-s", "-S", "-L", "-k", "-v", "-i", "-I", "-f", "-g", "-G", "-N", "-O", "-J", "-R", "-#", "-0", "-1", "-2",
        "-3", "-4", "-6", "-l", "-j", "-n", "-p", "-q", "-Z", "--silent", "--show-error", "--location", "--insecure",
        "--verbose", "--include", "--head", "--fail", "--fail-with-body", "--globoff", "--get", "--no-buffer",
        "--remote-name", "--remote-name-all", "--remote-header-name", "--remote-time", "--compressed", "--http1.0",
        "--http1.1", "--http2", "--http3", "--ipv4", "--ipv6", "--location-trusted", "--list-only", "--junk-session-cookies",
        "--netrc", "--proxytunnel", "--disable", "--parallel", "--create-dirs", "--no-progress-meter", "--progress-bar",
        "--tcp-nodelay", "--tlsv1.2", "--tlsv1.3", "--ssl-reqd", "--digest", "--basic", "--ntlm", "--negotiate",
        "--anyauth", "--raw", "--no-keepalive", "--no-sessionid", "--path-as-is", "--post301", "--post302", "--post303",
        "--styled-output", "--no-styled-output", "--trace-time", "--xattr", "--fail-early", "--retry-connrefused",
        "--retry-all-errors", "--ssl-no-revoke", "--proto-default-https"}),
    "wget": frozenset({
        "-q", "-v", "-nv", "-c", "-N", "-r", "-np", "-nd", "-nH", "-nc", "-k", "-K", "-p", "-S", "-m", "-x", "-E", "-H",
        "-b", "-F", "-4", "-6", "--quiet", "--verbose", "--no-verbose", "--continue", "--timestamping", "--recursive",
        "--no-parent", "--no-directories", "--no-host-directories", "--no-clobber", "--convert-links", "--backup-converted",
        "--page-requisites", "--server-response", "--mirror", "--force-directories", "--adjust-extension",
        "--span-hosts", "--background", "--force-html", "--inet4-only", "--inet6-only", "--no-check-certificate",
        "--content-disposition", "--trust-server-names", "--spider", "--no-cookies", "--ignore-length", "--show-progress",
        "--no-proxy", "--no-cache", "--no-dns-cache", "--delete-after", "--https-only", "--retry-connrefused"}),
    "aria2c": frozenset({"-q", "-c", "-Z", "-V", "--quiet", "--continue", "--force-sequential", "--check-integrity"}),
}
# Options whose value is the URL itself.
_URL_OPTIONS = frozenset({"--url"})
# What ends a command in a shell's command line, outside quotes: data after it is an operand of
# the command that follows (``cd /srv && wget URL``).
_SEPARATORS = (";", "&&", "||", "|", "&", "\n", "$(", "`", "(")
# Shell redirections: the word after one is a file, not an operand.
_REDIRECTIONS = frozenset({">", ">>", "<", "<<", "<<<", "2>", "2>>", "&>", "1>", ">|"})


def fetched_part(value: Value) -> tuple[Value, str]:
    """Returns the operands of a command (an argument vector, or a shell command line known by
    its constant start) that a program in ``FETCHERS`` fetches as URLs: the items after it
    that are no constant and no option's value (see the module doc); in a command line, the
    data that follows the program's name in the same command. Wrappers (``sudo``,
    ``timeout``) are skipped to the program they run.

    Args:
        value: The vector or the command line as the engine knows it.

    Returns:
        The operands so placed, joined (a word's constant start kept as the value's prefix,
        so a fixed ``https://host/`` is seen), and the program's name; ``(EMPTY, "")`` when
        the program is none of them or is not known.
    """
    if value.items is None:
        return _fetched_in_line(value)
    items = argv.vector(value)
    start = argv.program_index(items) if items else None
    if start is None:
        return EMPTY, ""
    assert items is not None
    name = argv.base_name(str(items[start].const))
    if name not in FETCHERS:
        line = argv.program_part(value)  # ["sh", "-c", "curl " + url]: the command line the shell runs
        return _fetched_in_line(line) if line.items is None else (EMPTY, "")
    reached: list[Value] = []
    option = ""  # the option whose value the next argument is
    for item in items[start + 1:]:
        if item.is_const:
            word = str(item.const)
            option = "" if option else word if _takes_value(name, word) else ""
            continue
        if option:
            taken, option = option, ""
            if taken not in _URL_OPTIONS:
                continue  # an option's value (--url's is the URL)
        elif item.prefix and item.prefix.startswith("-") and not item.prefix.startswith("--url="):
            continue  # "-H" + value, "--header=" + value: an option's own value
        reached.append(item)
    return (join(*reached) if reached else EMPTY), name


def _takes_value(name: str, word: str) -> bool:
    """True when ``word`` is an option of fetcher ``name`` whose value is the next argument: an
    option not known to take none (``_FLAGS``), a group of short options ending with one, or
    ``--url``."""
    if not word.startswith("-") or word == "-" or "=" in word or word == "--":
        return False
    flags = _FLAGS.get(name, frozenset())
    if word in flags:
        return False
    if not word.startswith("--") and len(word) > 2:  # -sSL: a group; its last letter may take a value
        return all(f"-{letter}" in flags for letter in word[1:-1]) and f"-{word[-1]}" not in flags
    return True


def _fetched_in_line(value: Value) -> tuple[Value, str]:
    """``fetched_part`` for a shell command line: its constant start names the program."""
    prefix = value.prefix
    if not prefix or value.is_const:
        return EMPTY, ""
    words, current = _last_command(prefix)
    assigned = 0
    while assigned < len(words) and "=" in words[assigned]:
        assigned += 1  # A=1 curl ...: an assignment before the command
    # Wrappers (sudo -u x, nice -n 10, timeout 30s) skipped as in a vector.
    found = argv.program_index([constant(word) for word in words[assigned:]])
    index = assigned + found if found is not None else len(words)
    if index >= len(words) or argv.base_name(words[index]) not in FETCHERS:
        return EMPTY, ""  # no program yet, or the data changes the program's name
    name = argv.base_name(words[index])
    before = words[index + 1:][-1:]
    if before and (before[0] in _REDIRECTIONS or _takes_value(name, before[0]) and before[0] not in _URL_OPTIONS):
        return EMPTY, ""  # -o DATA, -H 'X: DATA', > DATA: a path, a header or data, not a URL
    if current is not None and (current.startswith(("-", ">", "<")) and not current.startswith("--url=")):
        return EMPTY, ""  # --header=DATA, >DATA: an option's own value, a file
    return Value(labels=value.flatten().labels, prefix=(current or "").removeprefix("--url=") or None), name


def _last_command(text: str) -> tuple[list[str], str | None]:
    """The complete words of the last command of a shell command line's start (quotes removed;
    ``;``, ``&&``, ``|``, ``$(`` and the like outside quotes begin a new command) and the word
    the text ends inside (None when it ends with a space outside quotes)."""
    words: list[str] = []
    current: str | None = None
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == quote:
                quote = ""
            else:
                current = (current or "") + char
        elif char in "'\"":
            quote, current = char, current or ""
        elif separator := next((s for s in _SEPARATORS if text.startswith(s, index)), None):
            words, current = [], None
            index += len(separator)
            continue
        elif char.isspace():
            if current is not None:
                words.append(current)
            current = None
        else:
            current = (current or "") + char
        index += 1
    return words, current
