import yaml
from fastapi import FastAPI, Request

app = FastAPI()


@app.post("/pipelines")
async def create_pipeline(request: Request):
    body = await request.body()
    spec = yaml.load(body, Loader=yaml.FullLoader)
    return {"stages": len(spec.get("stages", []))}
