import pickle

from myapp.models import Order


def test_pickle_roundtrip():
    order = Order(id=1)
    assert pickle.loads(pickle.dumps(order)).id == 1
