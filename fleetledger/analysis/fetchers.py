"""Which operands of a command a program fetches as URLs: curl, wget and their kind fetch the
URLs among their operands, so outside data there chooses where a request goes (SSRF,
CWE-918), whatever else it does as an argument. The conventions are the programs' own (their
manual pages), read from an argument vector or from a shell command line's constant start.
"""

from __future__ import annotations

from . import argv
from .values import EMPTY, Value, join

# Programs that fetch the URLs among their operands (their manual pages): outside data there
# chooses where the request goes (CWE-918), whatever else it may do as an argument.
FETCHERS = frozenset({"curl", "wget", "aria2c", "lynx", "w3m", "xh"})
# Their options whose value (the next argument, or the rest of the word) is no URL: data,
# headers, or a path to write or read.
_NOT_URL_OPTIONS = {
    "curl": frozenset({"-o", "-O", "-K", "-T", "-c", "-D", "-E", "-w", "-F", "--output", "--config", "--upload-file",
                       "--cookie-jar", "--dump-header", "--cert", "--key", "--write-out", "--form", "--data-binary",
                       "--data-raw", "--data-urlencode", "--json"}),
    "wget": frozenset({"-O", "-o", "-a", "-P", "-i", "-e", "--output-document", "--output-file", "--append-output",
                       "--directory-prefix", "--input-file", "--execute", "--post-data", "--post-file", "--password",
                       "--user"}),
    "aria2c": frozenset({"-d", "-o", "-i", "--dir", "--out", "--input-file"}),
}
# What ends a command in a shell's command line: data after it is no operand of the program before.
_COMMAND_ENDS = frozenset(";|&\n`$(")


def fetched_part(value: Value) -> tuple[Value, str]:
    """Returns the operands of a command (an argument vector, or a shell command line known by
    its constant start) that a program in ``FETCHERS`` fetches as URLs: the items after it
    that are no constant and no value of an option in ``_NOT_URL_OPTIONS`` or
    ``argv.DATA_OPTIONS``; in a command line, what follows the program's name in the same
    command. Wrappers (``sudo``, ``timeout``) are skipped to the program they run.

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
        return EMPTY, ""
    not_url = _not_url(name)
    reached: list[Value] = []
    value_next = False
    for item in items[start + 1:]:
        if value_next:
            value_next = False
            continue
        if item.is_const:
            text = str(item.const)
            value_next = text in not_url or (text.startswith("-") and not text.startswith("--") and len(text) > 2
                                             and f"-{text[-1]}" in not_url)
            continue
        if item.prefix and item.prefix.startswith("-") and not item.prefix.startswith("--url="):
            continue  # "-H" + value, "--header=" + value: an option's own value
        reached.append(item)
    return (join(*reached) if reached else EMPTY), name


def _fetched_in_line(value: Value) -> tuple[Value, str]:
    """``fetched_part`` for a shell command line: its constant start names the program."""
    prefix = value.prefix
    if not prefix or value.is_const or any(mark in prefix for mark in _COMMAND_ENDS):
        return EMPTY, ""
    words, current = _shell_words(prefix)
    index = 0
    while index < len(words) and (argv.base_name(words[index]) in argv.WRAPPERS or words[index].startswith("-")
                                  or "=" in words[index] or words[index].isdigit()):
        index += 1  # sudo -u x, env A=1, timeout 5: what runs comes later
    if index >= len(words) or argv.base_name(words[index]) not in FETCHERS:
        return EMPTY, ""  # no program yet, or the data changes the program's name
    name = argv.base_name(words[index])
    not_url = _not_url(name)
    before = words[index + 1:][-1:]
    if before and before[0] in not_url:
        return EMPTY, ""  # -o DATA, -H 'X: DATA': a path, a header or data, not a URL
    if current is not None and current.startswith("-") and not current.startswith("--url="):
        return EMPTY, ""  # --header=DATA: an option's own value
    return Value(labels=value.flatten().labels, prefix=(current or "").removeprefix("--url=") or None), name


def _shell_words(text: str) -> tuple[list[str], str | None]:
    """The complete words of a shell command line's start (quotes removed) and the word the
    text ends inside (None when it ends with a space outside quotes)."""
    words: list[str] = []
    current: str | None = None
    quote = ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
            else:
                current = (current or "") + char
        elif char in "'\"":
            quote, current = char, current or ""
        elif char.isspace():
            if current is not None:
                words.append(current)
            current = None
        else:
            current = (current or "") + char
    return words, current


def _not_url(name: str) -> frozenset[str]:
    """The options of fetcher ``name`` whose value is no URL (``--url``'s is)."""
    return (_NOT_URL_OPTIONS.get(name, frozenset()) | argv.DATA_OPTIONS.get(name, frozenset())) - {"--url"}
