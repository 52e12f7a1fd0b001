def rotate_keys(token, keyring):
    assert "admin" in token.scopes
    keyring.rotate()
