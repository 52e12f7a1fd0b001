"""fleetledger's version, in a module that imports nothing (``fleetledger.__version__``)."""

__version__ = "0.1.0"
