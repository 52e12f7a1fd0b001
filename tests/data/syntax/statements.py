# every statement kind, and expression forms whose positions have conventions.
import os.path as osp, sys
from . import sibling
from .. import parent as p
from .pkg.mod import (a, b as c,)
from os import *
from __future__ import annotations
global g1, g2
x = y = z = 0
a, b = b, a
[c, *d] = e, *f = range(5)
obj.attr, seq[0], seq[1:2] = 1, 2, [3]
(paren) = 1
t: tuple[int, ...] = ()
obj.attr: int
count += 1; count -= 1; count *= 2; count @= m; count //= 3; count **= 2; count >>= 1; count |= 4
del x, y[0], z.attr, (a, b), [c]
assert x > 0, "message"
raise
raise ValueError("x") from None
for i, (j, k) in enumerate(pairs):
    if i:
        continue
    elif j:
        break
    elif k: pass
    else:
        pass
else:
    pass
while False:
    pass
else:
    pass
try:
    pass
except Exception as exc:
    pass
else:
    pass
finally:
    pass
try:
    pass
finally:
    pass


def outer():
    v = 1
    def inner():
        nonlocal v
        v = yield v
        w = yield
        yield from range(3)
        return v, w
    async def co():
        await inner()
        async for q in aiter():
            pass
        result = [r async for r in aiter() if await r]
        return result
    return inner; pass


class C(Base, metaclass=Meta, **kw):
    """Docstring."""
    attr = 1; other = 2;


expr = a if b else c if d else e
chain = a < b <= c == d != e > f >= g in h not in i is j is not k
logic = a and b and (c or d) or not e
bits = ~a ^ b & c | d << 1 >> 2
arith = -a + +b - c * d / e // f % g @ h ** -i ** j
calls = f(a, *args, key=1, **kwargs)(1)[2].attr.method(x for x in y)
slices = s[1:2], s[::2], s[:], s[1:2, ::3], s[..., 0], s[*idx], s[a, *b], s[1,]
colls = [1, *a], (1,), (), {1, *b}, {1: 2, **c, 3: 4}, {}
comps = [x for x in y if x if not x for z in x], {k: v for k, v in d}, {s for s in t}, (g for g in h)
lam = lambda a, *b, c=1, **d: (a, b, c, d)
starred = *a, *b.c, *f()
print(*a, *b, sep="", **kw)
