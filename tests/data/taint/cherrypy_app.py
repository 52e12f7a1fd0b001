# Engine probe: a CherryPy exposed method's parameters are the query's and the form's values,
# and what it returns is the page.
import os
import sqlite3

import cherrypy
from cherrypy.lib.static import serve_file


class Shop:
    @cherrypy.expose
    def search(self, term):
        db = sqlite3.connect("shop.db")
        rows = db.execute("SELECT name FROM items WHERE name LIKE '%" + term + "%'").fetchall()  # $ sql
        return "<h1>Results for " + term + "</h1>" + str(len(rows))  # $ xss

    @cherrypy.expose
    def manual(self, page):
        return serve_file(os.path.join("/srv/manual", page))  # $ path

    @cherrypy.expose
    def back(self):
        raise cherrypy.HTTPRedirect(cherrypy.request.headers.get("Referer", "/"))  # $ redirect


cherrypy.quickstart(Shop())
