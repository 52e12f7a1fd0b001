def test_login(client):
    response = client.post("/login", data={"username": "alice"}, password="correct horse")
    assert response.status_code == 302
