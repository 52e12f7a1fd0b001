import xml.sax

import tornado.web


class OutlineCollector(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.feeds = []

    def startElement(self, name, attrs):
        if name == "outline" and "xmlUrl" in attrs:
            self.feeds.append(attrs["xmlUrl"])


class OpmlImportHandler(tornado.web.RequestHandler):
    def post(self):
        collector = OutlineCollector()
        parser = xml.sax.make_parser()
        parser.setContentHandler(collector)
        parser.feed(self.request.body)
        parser.close()
        self.write({"feeds": collector.feeds})
