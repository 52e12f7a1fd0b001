# Engine probe: a signing or encryption key that is a string constant is written in the source
# (CWE-798), however it reaches the call; a key read from configuration is not.
import hmac
import os

import jwt
from cryptography.fernet import Fernet
from Crypto.Cipher import AES

SIGNING = "s3cr3t-signing-value"


def issue(claims):
    return jwt.encode(claims, SIGNING, algorithm="HS256")  # $ hardcoded-key


def check(token):
    shared = "another-literal"
    return jwt.decode(token, key=shared, algorithms=["HS256"])  # $ hardcoded-key


def mac(message):
    return hmac.new(b"\x01\x02\x03\x04", message, "sha256").hexdigest()  # $ hardcoded-key


def box(data):
    return Fernet(b"bm90LWEtcmVhbC1rZXktYnV0LWEtbGl0ZXJhbC0xMjM=").encrypt(data)  # $ hardcoded-key


def seal(data):
    return AES.new(b"sixteen byte key", AES.MODE_GCM).encrypt(data)  # $ hardcoded-key


def configured(claims, token, message):
    key = os.environ["JWT_KEY"]
    signed = jwt.encode(claims, key, algorithm="HS256")  # ok hardcoded-key
    read = jwt.decode(token, os.environ.get("JWT_KEY"), algorithms=["HS256"])  # ok hardcoded-key
    empty = hmac.new(b"", message, "sha256")  # ok hardcoded-key (no key at all is another problem)
    return signed, read, empty
