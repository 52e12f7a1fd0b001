# Engine probe: Flask autoescapes a template only when its name ends .html, .htm, .xml, .xhtml or .svg.
from flask import Flask, render_template, request

app = Flask(__name__)


@app.route("/s1")
def s1():
    return render_template("p1.txt", v1=request.args["a"])  # $ xss


@app.route("/s2")
def s2():
    return render_template("p1.html", v1=request.args["a"])  # ok xss


@app.route("/s3")
def s3():
    n1 = request.args.get("f", "p2")
    return render_template("t/" + n1 + ".md", v1=request.args["a"])  # $ xss


@app.route("/s4")
def s4(n2="p3"):
    return render_template(n2, v1=request.args["a"])  # ok xss (a name the scan cannot read)


@app.route("/s5")
def s5():
    return render_template(["p4.txt", "p4.html"], v1=request.args["a"])  # ok xss (a list: Flask picks)


@app.route("/s6")
def s6():
    b1 = render_template("m1.txt", v1=request.args["a"])
    print(b1)
    return "sent"  # ok xss
