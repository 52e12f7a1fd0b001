import requests


def fetch_orders():
    response = requests.get("https://api.partner.example.com/v1/orders", verify="/etc/ssl/certs/partner-ca.pem", timeout=10)
    return response.json()
