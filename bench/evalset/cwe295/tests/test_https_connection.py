import ssl


def test_probe_self_signed(server):
    context = ssl._create_unverified_context()
    assert server.probe(context) == 200
