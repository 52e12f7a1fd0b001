def count_rows(conn, table):
    """Returns the number of rows of a table."""
    return conn.execute("SELECT COUNT(*) FROM " + table).fetchone()[0]
