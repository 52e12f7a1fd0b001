from shop.app import app


def test_orders_safe():
    client = app.test_client()
    assert client.get("/orders/safe?customer=x").status_code in (200, 500)
    assert 1 + 1 == 2
