from fastapi import Depends, FastAPI
from sqlalchemy import text
from sqlalchemy.orm import Session

from .deps import get_db

app = FastAPI()


@app.get("/items")
def items(category: str, db: Session = Depends(get_db)):
    rows = db.execute(text(f"SELECT id, name FROM items WHERE category = '{category}'"))
    return [dict(r._mapping) for r in rows]
