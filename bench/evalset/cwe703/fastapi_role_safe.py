from fastapi import Depends, FastAPI, HTTPException

from .auth import current_user
from .store import articles

app = FastAPI()


@app.delete("/articles/{slug}")
def delete_article(slug: str, user=Depends(current_user)):
    if user.role not in ("admin", "editor"):
        raise HTTPException(status_code=403)
    articles.delete(slug)
    return {"deleted": slug}
