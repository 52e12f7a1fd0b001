# Engine probe: PEP 484 type comments declare what a parameter or a variable holds, as an
# annotation does. The functions are private, so their parameters are no entry points: only the
# declared type tells that what ``session.get`` returns is a response whose headers come from the
# network.
import cgi
import os

import requests


class Downloader(requests.Session):
    pass


def _opened():
    return object()


def _saved(session, temp_dir, url):
    # type: (Downloader, str, str) -> str
    response = session.get(url)
    _, params = cgi.parse_header(response.headers["content-disposition"])
    return open(os.path.join(temp_dir, params["filename"]), "wb")  # $ path


def _saved_per_parameter(
    session,  # type: requests.Session
    temp_dir,  # type: str
    url,
):
    response = session.get(url)
    return open(os.path.join(temp_dir, response.headers["x-name"]), "wb")  # $ path


def _returns_only(session, temp_dir, url):
    # type: (...) -> None
    response = session.get(url)
    open(os.path.join(temp_dir, response.headers["x-name"]), "wb")  # ok path (no parameter's type is declared)


def _miscounted(session, temp_dir, url):
    # type: (Downloader) -> None
    response = session.get(url)
    open(os.path.join(temp_dir, response.headers["x-name"]), "wb")  # ok path (one type for three parameters)


def _assigned(temp_dir, url):
    session = _opened()  # type: Downloader
    response = session.get(url)
    open(os.path.join(temp_dir, response.headers["x-name"]), "wb")  # $ path (an assignment's type comment)
    other = _opened()
    open(os.path.join(temp_dir, other.get(url).headers["x-name"]), "wb")  # ok path (no type declared)


class Mirror:
    def _fetch(self, session, temp_dir):
        # type: (requests.Session, str) -> None
        response = session.get("https://mirror.example/index")
        open(os.path.join(temp_dir, response.headers["x-name"]), "wb")  # $ path (a method's self is left out)

    def _annotated(self, session: object, temp_dir):
        # type: (Downloader, str) -> None
        response = session.get("https://mirror.example/index")
        open(os.path.join(temp_dir, response.headers["x-name"]), "wb")  # ok path (the annotation wins)
