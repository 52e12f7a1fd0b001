from xml.dom import pulldom


class Deserializer:
    def __init__(self, stream):
        self.stream = stream
        self.event_stream = pulldom.parse(self.stream)
