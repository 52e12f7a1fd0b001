import pickle


def load_cache():
    with open("/tmp/app-cache.pkl", "rb") as handle:
        return pickle.load(handle)
