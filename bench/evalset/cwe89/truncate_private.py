def _clear(cur, table):
    cur.execute("DELETE FROM " + table)


def reset(cur):
    _clear(cur, "sessions")
    _clear(cur, "password_resets")
