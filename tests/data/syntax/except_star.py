# except* (PEP 654).
try:
    raise ExceptionGroup("group", [ValueError(1), TypeError(2)])
except* ValueError as group:
    print(group.exceptions)
except* (TypeError, KeyError):
    pass
else:
    pass
finally:
    pass
