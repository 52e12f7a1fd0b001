import requests


def fetch_orders():
    response = requests.get("https://api.partner.example.com/v1/orders", verify=False, timeout=10)
    return response.json()
