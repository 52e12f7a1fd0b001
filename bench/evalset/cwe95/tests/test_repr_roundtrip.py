from myapp.money import Money


def test_repr_roundtrip():
    value = Money(3, "EUR")
    assert eval(repr(value)) == value
