class IfParser:
    def __init__(self, tokens):
        mapped = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token == "not" and i + 1 < len(tokens) and tokens[i + 1] == "in":
                token = "not in"
                i += 1
            mapped.append(token)
            i += 1
        self.tokens = mapped
