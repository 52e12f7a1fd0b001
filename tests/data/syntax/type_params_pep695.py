# PEP 695 type parameters and aliases, with PEP 696 defaults.
from collections.abc import Callable


def identity[T](value: T) -> T:
    return value


def bounded[T: int, U: (str, bytes)](a: T, b: U) -> tuple[T, U]:
    return a, b


def variadic[*Ts, **P](f: Callable[P, tuple[*Ts]], *args: *Ts) -> None:
    pass


async def coro[T](x: T) -> T:
    return x


class Box[T]:
    def get(self) -> T: ...


class Pair[K: str, V = int](dict[K, V]):
    pass


class Defaults[T = int, *Ts = *tuple[int, ...], **P = [int, str]]:
    pass


class Bounded[T: (int, str) = int, U: float = float]:
    pass


type Alias = int
type ListOf[T] = list[T]
type Nested[T, *Ts, **P] = Callable[P, tuple[T, *Ts]]
type WithDefault[T = str] = dict[str, T]
type Recursive = list[Recursive] | None
type = "type is still a name"
type.__name__
print(type)
