from requests_oauthlib import OAuth2Session


def session():
    return OAuth2Session(client_id="dashboard", token="8c1f0e5a9b7d4c2e6f3a1b0c")
