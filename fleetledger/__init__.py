"""fleetledger: a crash-only runtime for fleets of agent workers."""
__version__ = "0.1.0"
