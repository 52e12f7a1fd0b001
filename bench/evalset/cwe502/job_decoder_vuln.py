import pickle


def decode_job(payload: bytes):
    """Turns a queued job back into its object."""
    return pickle.loads(payload)
