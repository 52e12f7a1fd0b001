import requests


class BillingClient:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def invoices(self):
        return requests.get(self.base_url + "/invoices", verify=False, timeout=10).json()
