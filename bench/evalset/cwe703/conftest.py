import pytest


@pytest.fixture
def workdir(tmp_path):
    assert tmp_path.exists()
    return tmp_path
