import requests


class BillingClient:
    def invoices(self):
        return requests.get("http://localhost:8080/invoices", verify=False, timeout=10).json()
