import pickle


def load_model(path):
    with open(path, "rb") as handle:
        return pickle.load(handle)
