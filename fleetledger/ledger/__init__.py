"""The ledger: append-only, hash-chained records, and the storage backends that keep them."""

from .records import KINDS, UNIQUE_KINDS, NewRecord, Record, canonical_json, iso_utc
from .backends import open_storage
from .storage import Appended, Duplicate, Outcome, Refused, Storage

__all__ = [
    "KINDS", "UNIQUE_KINDS", "NewRecord", "Record", "canonical_json", "iso_utc",
    "Appended", "Duplicate", "Outcome", "Refused", "Storage", "open_storage",
]
