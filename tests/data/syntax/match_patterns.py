# match with every pattern kind.
def check(command, point):
    match command:
        case 1 | -2 | 3.5 | -1.5 | 1 + 2j | -1 - 2j | 0x1F:
            pass
        case "quit" | b"bytes" | "implicit" "concatenation":
            pass
        case None:
            pass
        case True | False:
            pass
        case [] | ():
            pass
        case [x] | (x,):
            pass
        case [first, *rest]:
            pass
        case (a, b, *_):
            pass
        case {"action": action, **extra}:
            pass
        case {1: one, -2: two, 3 + 4j: three, Color.RED: red}:
            pass
        case {}:
            pass
        case Point(x=0, y=0):
            pass
        case Point(0, y) if y > 0:
            pass
        case geometry.shapes.Circle(radius=r) as circle:
            pass
        case int() | str():
            pass
        case [Point(x=0), *others] as whole if others:
            pass
        case ast.Expr(value=ast.Constant(value=str() as doc), kind=[1, 2] as k):
            pass
        case (1 | 2) as small:
            pass
        case Color.RED:
            pass
        case _:
            pass
    match point:
        case x, y:
            pass
        case *xs, last,:
            pass
    match command, point:
        case _:
            pass
    match (command):
        case (x):
            pass
    match = 1
    match.real
    case = 2
    return match + case
