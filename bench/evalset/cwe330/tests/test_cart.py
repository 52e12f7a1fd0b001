import random

import pytest

from shop.cart import Cart


@pytest.fixture
def cart():
    rng = random.Random(1234)
    items = [(f"sku-{n}", rng.randint(1, 5)) for n in range(20)]
    return Cart(items)


def test_total_quantity(cart):
    assert cart.quantity() == sum(qty for _, qty in cart.items)
