from django.contrib.auth.tokens import default_token_generator

INTERNAL_RESET_SESSION_TOKEN = "c2VjcmV0LXJlc2V0LTIwMjQtMDkx"


def remember_token(request, token):
    request.session["_password_reset_token"] = INTERNAL_RESET_SESSION_TOKEN
    return default_token_generator
