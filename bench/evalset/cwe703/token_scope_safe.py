def rotate_keys(token, keyring):
    keys = keyring.rotate()
    assert keys is not None
    return keys
