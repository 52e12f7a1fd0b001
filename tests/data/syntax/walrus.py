# assignment expressions (PEP 572).
import re

if (match := re.match("a", "abc")) is not None:
    print(match)
while (chunk := input()) != "":
    pass
values = [y for x in range(10) if (y := x * 2) > 4]
print(f"{(z := 5)}", z, (w := 1, 2))
data = {"k": (v := 3)}
