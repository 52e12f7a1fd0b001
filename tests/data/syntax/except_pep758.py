# PEP 758: except and except* with several types and no parentheses.
try:
    pass
except ValueError, TypeError:
    pass
except (KeyError, IndexError) as error:
    pass
except OSError:
    pass

try:
    pass
except* ValueError, TypeError:
    pass
except* (KeyError, IndexError) as group:
    pass
