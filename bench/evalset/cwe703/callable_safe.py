HANDLERS = {}


def register(name, handler):
    assert callable(handler)
    HANDLERS[name] = handler
