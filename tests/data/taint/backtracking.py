# Engine probe: regular expressions whose matching can take exponential time (ReDoS), and
# ones that look alike but cannot.
import re

WORDS = r"^(\w+\s?)*$"
EMAIL = re.compile(r"^([a-zA-Z0-9]+[._-]?)+@example\.com$")  # $ redos
ANCHORED = re.compile(WORDS)  # $ redos (the pattern held in a name)
DOTTED = re.compile(r"^(\w+\.)*\w+$")  # ok redos (a dot ends each repetition)
POSSESSIVE = re.compile(r"^(?:\w++\s?)*$")  # ok redos (a possessive repetition never backtracks)
MERGED = re.compile(r"(\w|\d)+$")  # ok redos (re merges the alternatives into one class)
OPEN_END = re.compile(r"(\w+\s?)*")  # ok redos (nothing after it can fail)
COMMENTED = re.compile(r"^\d{3}  # never (x+)+y or (a|a)*b", re.VERBOSE)  # ok redos (re.VERBOSE: a comment)
FLAGGED = re.search(r"^(\w+\s?)*$", "text", flags=re.I)  # $ redos
UNITS = re.compile(r"^(?:%s)+$" % "|".join(["km", "m", "cm", "mm"]))  # $ redos ("mm" is one word or two)
FACTORED = re.compile(r"(a|aa)+$")  # $ redos (parsed a(?:|a): "aa" is one repetition or two)
PREFIX_CODE = re.compile(r"^(?:0|10|110)+$")  # ok redos (no word starts another: one way to cut a text)
SUFFIXES = re.compile(r"^(?:a|ab|abb)+$")  # ok redos (uniquely decodable)
VCHAR = "[\x21-\x7e]"
FIELD = re.compile(("^(" + VCHAR + "([ \t\x21-\x7e]+" + VCHAR + "){,1}){0,}$").encode("latin-1"))  # $ redos (encoded constants fold)
UNKNOWN_CODEC = re.compile("^(a+)+$".encode("no-such-codec"))  # ok redos (Python raises: no pattern)


def check(text):
    if re.fullmatch(r"(\d+\.?\d*)+", text):  # $ redos (fullmatch must reach the end)
        return True
    return re.match(r"(a|a)+b", text) is not None  # $ redos


def split(text):
    return re.split(pattern=r"(?:.*,)*;", string=text)  # $ redos
SPECIAL = re.escape(b'()<>@,;:\\"/[]?={} \t')
OPTION = re.compile(br'(?:;|^)\s*([^' + SPECIAL + br']+)\s*=\s*((?:[^' + SPECIAL + br']+|"(?:\\.|[^"])*"))')  # $ redos (escaped constants fold)
LEADING = "|".join(map(re.escape, ("(", "<", "&lt;")))
PUNCTUATION = re.compile("^(?P<lead>(?:%s)*)(?P<middle>.*?)(?P<trail>(?:%s)*)$" % (LEADING, "|".join(map(re.escape, (".", ",", ")", "&gt;")))))


def split_punctuation(word):
    return PUNCTUATION.match(word)  # $ slow-regex (a pattern built from escaped constants)


PARTS = {"word": "[a-z]+"}
SHAPES = ["(?:%(word)s)+", "-"]
JOINED = re.compile("^(?:" + "|".join([shape % PARTS for shape in SHAPES]) + ")+$")  # $ redos (a comprehension over constants, each formatted by a dict, folds)
FORMATTED = re.compile("^(?:{w}|{w}-)+$".format(w=PARTS["word"]))  # $ redos (format's keyword fields fold)
NUMBERED = re.compile("^{0}(?:{1}{0})*$".format("[0-9]+", ","))  # ok redos (folded: a comma ends each number)
