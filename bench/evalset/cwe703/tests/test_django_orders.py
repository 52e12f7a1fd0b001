from django.test import Client


def test_purge_requires_staff(admin_client: Client):
    response = admin_client.post("/orders/purge")
    assert response.status_code == 200
