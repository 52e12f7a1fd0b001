# Engine probe: names bound by "from X import *" are X's (here a library's).
from Crypto.Cipher import *  # noqa: F403


def encrypt(key, message):
    return DES.new(key).encrypt(message)  # $ weak-cipher
