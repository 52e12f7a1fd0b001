import random

import httpx
from fastapi import FastAPI

app = FastAPI()
REPLICAS = ["http://search-1:9200", "http://search-2:9200", "http://search-3:9200"]


@app.get("/search")
async def search(q: str):
    replica = random.choice(REPLICAS)
    async with httpx.AsyncClient(base_url=replica, timeout=5) as client:
        response = await client.get("/_search", params={"q": q})
    return response.json()
