# Engine probe: Pyramid's responses, made from pyramid.request's re-export or filled on the
# response the request carries.
from pyramid.request import Response
from pyramid.view import view_config


@view_config(route_name="echo")
def echo(request):
    given = request.params.get("p", "")
    return Response("<p>{0}</p>".format(given))  # $ xss


@view_config(route_name="fill")
def fill(request):
    given = request.params.get("p", "")
    request.response.body = "<p>%s</p>" % given  # $ xss
    request.response.text = "fixed"  # ok xss
    return request.response


def login_cookies(config, key, options):
    from pyramid.authentication import AuthTktAuthenticationPolicy, AuthTktCookieHelper
    from pyramid.session import SignedCookieSessionFactory

    config.set_authentication_policy(AuthTktAuthenticationPolicy(key))  # $ cookie-secure $ cookie-httponly
    AuthTktAuthenticationPolicy(key, secure=True, http_only=True)  # ok cookie-secure ok cookie-httponly
    AuthTktCookieHelper(key, "auth", True, False, None, None, None, True)  # ok cookie-secure ok cookie-httponly
    AuthTktCookieHelper(key, secure=True)  # $ cookie-httponly
    AuthTktCookieHelper(**options)  # ok cookie-secure ok cookie-httponly
    config.set_session_factory(SignedCookieSessionFactory(key, httponly=True))  # $ cookie-secure
