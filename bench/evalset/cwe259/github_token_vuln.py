import requests

API_TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


def list_repos():
    return requests.get("https://api.github.com/user/repos", headers={"Authorization": f"token {API_TOKEN}"}, timeout=10).json()
