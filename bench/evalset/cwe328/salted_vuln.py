import hashlib


def store_credentials(db, username, password, salt):
    digest = hashlib.new("sha1", (salt + password).encode()).hexdigest()
    db.save(username, salt, digest)
