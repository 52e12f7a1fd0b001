# string, bytes and number literals, decoded as CPython decodes them.
plain = "double" 'single' """triple
double""" '''triple
single'''
unicode_kind = u"kind u" "plain"
escapes = "\x41\101\u0041\U0001F40D\N{LATIN SMALL LETTER A}\N{EM DASH}\n\t\r\\\'\"\a\b\f\v\0\7"
unknown_escape = "\q \d \{"
continued = "line \
continued"
raw = r"\n\t\\" R'\x41' r"\\"
bytes_ = b"\x00\xff\101\n\\" B'abc' rb"\d" Br'\x41' b"\u0041\N{x}"
octal_big = "\777"
empty = ""
nums = [0, 00, 1_000_000, 0x_FF, 0XAB, 0o17, 0O7_7, 0b1010, 0B1_0, 1.5, 1., .5, 1e10, 1E-3, 1_0.0_1e1_0,
        1j, 1.5J, 1e3j, 0.0, 123456789012345678901234567890, 0xFFFFFFFFFFFFFFFFFFFF]
ellipsis = ...
singletons = None, True, False
concatenation = ("a" "b"
                 "c")
long_concat = (
    "first"  # comment between parts
    "second"
)
