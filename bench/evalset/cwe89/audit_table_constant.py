AUDIT_TABLE = "audit_log"


def record(cur, event):
    cur.execute(f"INSERT INTO {AUDIT_TABLE} (event) VALUES (%s)", (event,))
