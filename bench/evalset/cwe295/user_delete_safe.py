import requests

API = "https://users.example.org"


def delete_user(uid: int) -> None:
    requests.delete(f"{API}/users/{uid}", timeout=10)
