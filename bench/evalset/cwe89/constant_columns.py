COLUMNS = ("id", "name", "email")


def fetch_user(cur, user_id):
    cur.execute(f"SELECT {', '.join(COLUMNS)} FROM users WHERE id = %s", (user_id,))
    return cur.fetchone()
