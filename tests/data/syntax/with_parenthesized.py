# with statements with parenthesised items (3.9+).
with (open("a") as a, open("b") as b):
    pass
with (
    open("a") as a,
    open("b") as b,
):
    pass
with (open("a"), open("b")):
    pass
with (open("a"), open("b")) as pair:
    pass
with (open("a")):
    pass
with (
    open("a") as a
):
    pass
with open("a") as (x, y), open("b") as [z]:
    pass


async def f():
    async with (lock as held, other):
        pass
