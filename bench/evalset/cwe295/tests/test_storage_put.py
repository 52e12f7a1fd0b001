import requests


def test_upload_roundtrip(live_server):
    requests.put(f"{live_server.url}/bucket/latest", data=b"x", verify=False, timeout=30)
