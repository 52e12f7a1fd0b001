# a file that starts with a UTF-8 byte order mark
x = 'é'
y = f"{x}"
