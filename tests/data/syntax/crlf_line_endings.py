# a file with CRLF line ends
x = 1
def f(a,
      b):
    return '''one
two'''
y = (1 +
     2)
z = f"{x}\
"
if x:
    pass
