from fastapi import Depends, FastAPI

from .auth import current_user
from .store import articles

app = FastAPI()


@app.delete("/articles/{slug}")
def delete_article(slug: str, user=Depends(current_user)):
    assert user.role in ("admin", "editor")
    articles.delete(slug)
    return {"deleted": slug}
