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
