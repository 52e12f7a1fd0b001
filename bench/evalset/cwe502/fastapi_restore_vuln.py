import pickle

from fastapi import FastAPI, HTTPException, Request

app = FastAPI()


@app.post("/restore")
async def restore(request: Request):
    body = await request.body()
    state = pickle.loads(body)
    return {"restored": len(state)}
