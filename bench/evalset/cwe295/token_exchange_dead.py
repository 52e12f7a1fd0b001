import httpx


def exchange(form: dict) -> dict:
    if False:
        return httpx.post("https://auth.example.com/oauth/token", data=form, verify=False).json()
    return httpx.post("https://auth.example.com/oauth/token", data=form).json()
