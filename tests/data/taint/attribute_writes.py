# Engine probe: what a method of another object stores on itself (``self.backend.configure()``
# storing ``self.owner``, ``self.mode``) is that object's state, not the state of the object
# whose method made the call: the caller's own attributes keep what they held (joblib's
# Parallel lost its constructor's pre_dispatch to a backend's configure(parallel=self)).
import os


class Backend:
    def configure(self, owner=None):
        self.owner = owner
        self.mode = os.environ.get("MODE", "1 + 1")
        return 1


class Runner:
    def __init__(self, expression):
        self.expression = expression
        self.mode = "2 * 2"
        self.backend = Backend()

    def _start(self):
        return self.backend.configure(owner=self)

    def run(self):
        self._start()
        return eval(self.expression)  # $ code

    def run_mode(self):
        self._start()
        return eval(self.mode)  # ok code
