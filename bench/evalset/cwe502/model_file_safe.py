import os
import pickle

MODEL_PATH = os.path.join(os.path.dirname(__file__), "artifacts", "model.pkl")


def load_model():
    with open(MODEL_PATH, "rb") as handle:
        return pickle.load(handle)
