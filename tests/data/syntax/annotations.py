# annotations: unions (tree-sitter's "type" rule nests them either way), generics, strings.
x: list[int] | tuple[str, int, str] | str | None = None
y: a | b & c ^ d = 1
z: "forward" = None


def f(a: ExceptionInfo[BaseException]
      | tuple[str, int, str]
      | str
      | TerminalRepr, b: int | str = 1, *args: *tuple[int, ...]) -> dict[str, int] | None | A.B:
    pass


type X = int | str | list[int] | None
type Y = A.B[int] | C
