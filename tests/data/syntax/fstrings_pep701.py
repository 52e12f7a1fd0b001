# PEP 701 f-strings: nested quotes of the same kind, backslashes and comments inside the
# braces, replacement fields across lines, nested format specs and self-documenting fields.
songs = ["Take me back to Eden", "Alkaline", "Ascensionism"]
d = {"a": 1, "key": "v"}
x, width, precision = 3.14159, 10, 3

same_quotes = f"This is the playlist: {", ".join(songs)}"
nested = f"{f"{f"{f"{f"{f"{1+1}"}"}"}"}"}"
subscript = f"{d["key"]} and {d['a']}"
backslash = f"{'\n'.join(songs)}"
escaped_outside = f"tab\there {x}\n\N{BULLET} {'\N{EM DASH}'}"
multi_line = f"{
    x
    + 1
}"
with_comment = f"""{
    x  # a comment inside the braces
    * 2
}"""
format_spec = f"{x:{width}.{precision}f} {x:>{width}} {x!r:^{width + 2}} {x=:.2f}"
nested_spec = f"{x:{'>' if width else '<'}{width}}"
debug = f"{x=} {x = } {x=!s} {x = :>10} {d["a"]=}"
braces = f"{{literal}} {x}}}{{"
conversions = f"{songs!r} {songs!s} {songs!a}"
raw = rf"\d+{x}\w" fr'{x}\n'
concatenated = "plain " f"{x} " 'more ' f'{width:>3}' """end"""
lambda_in = f"{(lambda y: y * 2)(x)}"
walrus_in = f"{(n := 10)} {n:=5}"
tuple_in = f"{x, width}"
empty = f""
triple = f'''{
    songs[0]!r
}'''
dict_in = f"{ {'a': 1}['a'] }"
fill_equals = f"{x:=^20} {songs[0]:=<{width}} {x:=10}"
