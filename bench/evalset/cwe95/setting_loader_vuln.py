def load_setting(raw: str):
    """Turns a setting's text into a Python value."""
    return eval(raw)
