class Sheet:
    def __init__(self):
        self.cells = {}

    def compute(self, formula):
        namespace = dict(self.cells)
        exec(f"result = {formula}", namespace)
        return namespace["result"]
