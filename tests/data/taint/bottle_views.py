# Engine probe: Bottle's template() escapes what its {{...}} write, and redirect() raises the
# redirect (a view returning its call returns no page).
import bottle
from bottle import redirect, request, template

app = bottle.Bottle()


@app.route("/hello")
def hello():
    return template("<p>{{name}}</p>", name=request.query.name)  # ok xss (escaped)


@app.route("/raw")
def raw():
    return "<p>" + request.query.name + "</p>"  # $ xss


@app.route("/go")
def go():
    return redirect(request.query.next)  # $ redirect, ok xss (it raises)
