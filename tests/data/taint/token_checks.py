# Engine probe: JSON Web Tokens decoded without checking their signature.
import os

import jwt

KEY = os.environ["JWT_KEY"]


def claims(token):
    a = jwt.decode(token, options={"verify_signature": False})  # $ jwt-unverified
    b = jwt.decode(token, KEY, algorithms=["HS256", "none"])  # $ jwt-unverified
    c = jwt.decode(token, KEY, algorithms=["HS256"])  # ok jwt-unverified
    d = jwt.decode(token, KEY, algorithms=["HS256"], options={"verify_exp": False})  # ok jwt-unverified (the signature is checked)
    e = jwt.decode(token, verify=False)  # $ jwt-unverified
    forged = jwt.encode({"sub": "x"}, None, algorithm="none")  # $ jwt-unsigned
    return a, b, c, d, e, forged


def signed(message, signature):
    import base64
    import hashlib
    import hmac

    mac = hmac.new(KEY.encode(), message, hashlib.sha256)
    expected = mac.hexdigest()
    if expected == signature:  # $ timing (== stops at the first wrong character)
        return True
    if signature != hmac.digest(KEY.encode(), message, "sha256"):  # $ timing
        return False
    if "sha256=" + expected == signature:  # $ timing (the text built from the HMAC is still it)
        return True
    if base64.b64encode(mac.digest()) == signature or mac.digest().hex()[:16] == signature:  # $ timing
        return True
    if signature in (expected, mac.hexdigest().upper()):  # $ timing (in compares with each item)
        return True
    digest_of = mac.hexdigest
    if digest_of() != signature:  # $ timing (the method read, then called)
        return False
    if hmac.compare_digest(expected, signature):  # ok timing
        return True
    if expected == hashlib.sha256(b"fixed").hexdigest():  # ok timing (nothing outside in it)
        return True
    blinded = hmac.new(KEY.encode(), signature.encode(), hashlib.sha256).digest()
    if blinded == hmac.new(KEY.encode(), mac.digest(), hashlib.sha256).digest():  # ok timing (two HMACs computed here)
        return True
    return hashlib.sha256(message).hexdigest() == signature  # ok timing (a plain hash is no secret)
