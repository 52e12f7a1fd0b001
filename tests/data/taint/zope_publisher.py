# Engine probe: the Zope publisher's request, reached by acquisition (self.REQUEST) or by a
# published method's REQUEST parameter, and the response it carries.
from OFS.SimpleItem import SimpleItem
from OFS.Folder import Folder


class Gate(Folder):
    def enter(self):
        req = self.REQUEST
        resp = req["RESPONSE"]
        target = req.form["next"]
        return resp.redirect(target)  # $ redirect

    def leave(self, REQUEST):
        back = REQUEST.get("HTTP_REFERER")
        if back:
            REQUEST["RESPONSE"].redirect(back)  # $ redirect

    def home(self):
        self.REQUEST.RESPONSE.redirect(self.absolute_url())  # ok redirect

    def tag(self):
        label = self.REQUEST.get("label", "")
        self.REQUEST.RESPONSE.setHeader("X-Label", label)  # $ header
        self.REQUEST.RESPONSE.setHeader("X-Fixed", "yes")  # ok header


class Note(SimpleItem):
    def show(self, REQUEST=None):
        text = self.REQUEST.cookies.get("note", "")
        return self.REQUEST["RESPONSE"].redirect("/notes/" + text)  # ok redirect
