from django.contrib.auth.tokens import default_token_generator

INTERNAL_RESET_SESSION_TOKEN = "_password_reset_token"


def remember_token(request, token):
    request.session[INTERNAL_RESET_SESSION_TOKEN] = token
    return default_token_generator
