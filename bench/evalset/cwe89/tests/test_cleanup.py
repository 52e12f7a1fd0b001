import pytest


@pytest.fixture
def clean(db):
    yield db
    for table in ("users", "orders"):
        db.execute(f"DELETE FROM {table}")
