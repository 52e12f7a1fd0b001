import pickle


def clone(obj):
    return pickle.loads(pickle.dumps(obj))
