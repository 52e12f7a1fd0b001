import sqlite3


class SettingsStore:
    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path)

    def set(self, key: str, value: str) -> None:
        self.conn.execute("UPDATE settings SET value = ? WHERE key = ?", (value, key))
        self.conn.commit()
