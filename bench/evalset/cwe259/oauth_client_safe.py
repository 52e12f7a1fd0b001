from requests_oauthlib import OAuth2Session


def session():
    return OAuth2Session(client_id="dashboard", token="{token}")
