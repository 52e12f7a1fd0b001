# Engine probe: six.moves names the standard library's modules (their models apply), and Zope's
# browser views and z3c.form forms hold the request (self.request, a form's extractData()).
import pickle

from flask import request
from six.moves import cPickle, http_client, urllib
from six.moves.urllib.request import urlopen
from z3c.form import button, form
from Products.Five.browser import BrowserView


def fetch():
    urllib.request.urlopen(request.args["url"])  # $ ssrf
    urlopen(request.args["url"])  # $ ssrf
    http_client.HTTPConnection(request.args["host"]).request("GET", "/")  # $ ssrf
    cPickle.loads(request.data)  # $ deserialization
    pickle.loads(b"constant")  # ok deserialization


class ImportForm(form.EditForm):
    @button.buttonAndHandler("Import")
    def handle_import(self, action):
        data, errors = self.extractData()
        urllib.request.urlopen(data["url"])  # $ ssrf
        urlopen("https://example.org/feed")  # ok ssrf


class SearchView(BrowserView):
    def __call__(self):
        return urlopen(self.request.form.get("next"))  # $ ssrf
