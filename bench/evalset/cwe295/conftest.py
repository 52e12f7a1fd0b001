import pytest
import requests


@pytest.fixture
def insecure_session():
    session = requests.Session()
    session.get("https://staging.example.com/warmup", verify=False, timeout=5)
    return session
