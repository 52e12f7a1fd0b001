import requests

CA_BUNDLE = "/etc/ssl/certs/internal-ca.pem"


class InventoryClient:
    def __init__(self, base_url: str):
        self.base_url = base_url
        self.session = requests.Session()

    def items(self) -> list[dict]:
        response = self.session.get(f"{self.base_url}/items", verify=CA_BUNDLE, timeout=10)
        response.raise_for_status()
        return response.json()
