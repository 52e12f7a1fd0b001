# Engine probe: Flask extensions' request data: a WTForms field's submitted data (a text field's;
# an IntegerField's is a number), a Flask-RESTful request parser's arguments and a Resource's
# route arguments.
import sqlite3
import subprocess

from flask import Flask, render_template_string
from flask_restful import Api, Resource, reqparse
from flask_wtf import FlaskForm
from wtforms import IntegerField, StringField

app = Flask(__name__)
api = Api(app)


class SearchForm(FlaskForm):
    term = StringField("term")
    page = IntegerField("page")


@app.route("/search", methods=["POST"])
def search():
    form = SearchForm()
    if form.validate_on_submit():
        db = sqlite3.connect("app.db")
        db.execute("SELECT * FROM notes WHERE t = '%s'" % form.term.data)  # $ sql
        db.execute("SELECT * FROM notes LIMIT %d" % form.page.data)  # ok sql
    return "ok"


class Greeting(Resource):
    def get(self, name):
        return render_template_string("Hello " + name)  # $ ssti

    def post(self):
        parser = reqparse.RequestParser()
        parser.add_argument("host", type=str)
        args = parser.parse_args()
        subprocess.call("ping -c 1 " + args["host"], shell=True)  # $ command
        return {}


api.add_resource(Greeting, "/greet/<name>")
