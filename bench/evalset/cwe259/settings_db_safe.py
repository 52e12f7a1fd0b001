import os

DATABASE_HOST = "db.internal"
DATABASE_USER = "app"
DATABASE_PASSWORD = os.environ["DATABASE_PASSWORD"]
