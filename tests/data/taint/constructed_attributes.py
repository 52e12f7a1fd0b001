# Engine probe: an attribute __init__ stores from its parameter holds what the class's
# constructions in its module pass (passed_types): a session made there, or one another class's
# __init__ made and passes on from self. A method no code of the module calls (a callback a
# server runs, a client's public method) then knows the attribute's type.
import requests


class C1:
    def __init__(self, a):
        self.a = a

    def m1(self, u):
        return self.a.get(u)  # $ ssrf


class C2:
    def __init__(self):
        self.b = requests.Session()

    def m2(self):
        return C3(self.b)


class C3:
    def __init__(self, c):
        self.c = c

    def m3(self, u):
        return self.c.post(u, data={})  # $ ssrf


class C4:
    def get(self, u):
        return u


class C5:
    def __init__(self, d):
        self.d = d

    def m5(self, u):
        return self.d.get(u)  # ok ssrf


def f1():
    return C1(requests.Session())


def f2():
    return C5(C4())


class C6:
    def __init__(self, e):
        self.e = e

    def m6(self, u):
        return self.e.get(u)  # $ ssrf


SHARED = C6(requests.Session())
