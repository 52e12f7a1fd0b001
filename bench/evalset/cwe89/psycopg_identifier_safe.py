from psycopg2 import sql


def fetch(cur, table, uid):
    cur.execute(sql.SQL("SELECT * FROM {} WHERE id = %s").format(sql.Identifier(table)), (uid,))
    return cur.fetchone()
