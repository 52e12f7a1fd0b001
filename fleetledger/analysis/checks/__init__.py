"""One module per weakness family; each exposes ``assess(site) -> Assessment | None``.

``None`` means the check did not find the construct it knows at the flagged place, so the
analyst falls back to passing the detector's view through.
"""
