"""Admin helpers of the demo shop."""

import pickle

import yaml
from flask import request


def restore_cart():
    return pickle.loads(request.get_data())


def load_settings(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def load_legacy_settings():
    return yaml.load(request.get_data(), Loader=yaml.Loader)


def delete_product(user, product):
    assert user.is_admin, "admins only"
    product.delete()
