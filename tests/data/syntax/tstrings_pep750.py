# PEP 750 template strings.
name = "world"
width = 10
greeting = t"Hello {name}!"
converted = t"{name!r} {name!s} {name!a}"
formatted = t"{name:>{width}} {width:08.3f}"
debug = t"{name=} { name = } {width=:>5}"
concatenated = t"Hello " t"{name}" t''
raw = rt"\d{name}" tr'\w'
nested = t"{t"{name}"}"
multi = t"""{
    name  # comment
}"""
empty = t""
