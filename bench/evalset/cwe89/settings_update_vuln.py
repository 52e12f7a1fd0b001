import sqlite3


class SettingsStore:
    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path)

    def set(self, key: str, value: str) -> None:
        self.conn.execute("UPDATE settings SET value = '%s' WHERE key = '%s'" % (value, key))
        self.conn.commit()
