"""The parts of a run that the coordinator (``fleetledger.coordinator``) drives, one concept a
module: ``options`` (how to run, how it ended), ``host`` (what host-side job code gets),
``recovery``, ``leadership``, ``dispatch``, ``workers`` (the worker protocol and its trust
boundary), ``settlement`` (model calls), ``halts``, and ``operations`` (workspace operations
that need no live coordinator)."""
