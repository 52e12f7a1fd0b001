# Engine probe: Flask views registered by a call instead of a decorator (add_url_rule is what
# @app.route calls; register_error_handler what @app.errorhandler calls), class-based views, and
# views an application factory registers.
import os

from flask import Flask, request
from flask.views import MethodView

app = Flask(__name__)


def lookup(name):
    os.system("host " + name)  # $ command (a route argument)
    return "ok"


def item(number):
    os.system("cat /srv/" + str(number))  # ok command (the rule's int converter)
    return "ok"


def not_found(error):
    return "<h1>%s was not found</h1>" % request.path  # $ xss (the error page)


class Items(MethodView):
    def get(self, entry):
        os.system("cat " + entry)  # $ command
        return "ok"

    def helper(self, entry):
        os.system("cat " + entry)  # $ command (a public method: its callers decide)


app.add_url_rule("/lookup/<name>", "lookup", lookup)
app.add_url_rule("/item/<int:number>", view_func=item)
app.register_error_handler(404, not_found)
app.add_url_rule("/items/<entry>", view_func=Items.as_view("items"))


def create_app():
    made = Flask(__name__)

    def ping(host):
        os.system("ping -c1 " + host)  # $ command
        return "ok"

    made.add_url_rule("/ping/<host>", view_func=ping)

    @made.errorhandler(500)
    def failed(error):
        return "<p>%s failed</p>" % request.path  # $ xss (an error page of the factory's application)

    return made


class Counter(MethodView):
    def get(self, number):
        os.system("seq " + str(number))  # ok command (the rule's int converter)
        return "ok"


app.add_url_rule("/count/<int:number>", view_func=Counter.as_view("count"))
