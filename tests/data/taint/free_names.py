# Engine probe: a name no code of the file binds is a value the program running it supplies.
import os
import subprocess

os.system("ls " + n1)  # $ command


def f1(a1):
    c1 = "echo %s" % n2
    os.system(c1)  # $ command
    return subprocess.run(["ls", "-l"], check=True)


m1 = q1.p2
os.system(m1)  # ok command (q1 has an attribute read: a module the file forgot to import)
os.system(g1())  # ok command (g1 is called: a function, not data)
os.system(T1)  # ok command (T1 is a class the file annotates with)


def f2(a2: T1) -> None:
    try:
        a2.run()
    except E1 as e1:
        os.system(str(e1))  # ok command (e1 is bound by the handler)
