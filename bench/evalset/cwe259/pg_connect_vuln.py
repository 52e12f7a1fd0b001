import psycopg2


def connect():
    return psycopg2.connect(host="db", user="app", password="pg_pass_2023")
