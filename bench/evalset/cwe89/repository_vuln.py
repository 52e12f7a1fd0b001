class ItemRepository:
    def __init__(self, db):
        self.db = db

    def list(self, order_by):
        return self.db.execute(f"SELECT id, name FROM items ORDER BY {order_by}").fetchall()
