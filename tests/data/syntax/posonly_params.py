# positional-only, keyword-only, defaults, annotations, *args and **kwargs.
def f(a, b=1, /, c=2, *, d, e=3, **kwargs):
    pass


def g(a: int, /, b: str = "x", *args: int, c: float, **kwargs: object) -> None:
    pass


def h(*, key=None):
    pass


def i(a, /):
    pass


def j(a=1, /, b=2, *args, c, d=4):
    pass


square = lambda x, /, y=2, *rest, z, **kw: x * y
nothing = lambda: None
only_star = lambda *args: args
