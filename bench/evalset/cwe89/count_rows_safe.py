KNOWN_TABLES = frozenset({"users", "orders", "invoices"})


def count_rows(conn, table):
    """Returns the number of rows of a table."""
    if table not in KNOWN_TABLES:
        raise ValueError(f"unknown table {table!r}")
    return conn.execute("SELECT COUNT(*) FROM " + table).fetchone()[0]
