"""shop: fleetledger's demo target."""
