# decorators of any expression (PEP 614), on functions, async functions and classes.
import functools

buttons = [lambda f: f]


@functools.cache
@functools.lru_cache(maxsize=None)
@buttons[0]
@(lambda f: f)
@(yield_ := (lambda f: f))
@buttons[0] if buttons else None
def decorated():
    pass


@property
async def async_decorated():
    pass


@dataclass(frozen=True)
class Decorated:
    x: int = 0
