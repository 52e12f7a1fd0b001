import hashlib
import hmac
import pickle

QUEUE_KEY = b"from-the-environment"


class InvalidSignature(Exception):
    pass


def decode_job(payload: bytes, signature: str):
    """Turns a queued job back into its object."""
    expected = hmac.new(QUEUE_KEY, payload, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        raise InvalidSignature()
    return pickle.loads(payload)
