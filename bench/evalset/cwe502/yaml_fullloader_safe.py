import yaml
from fastapi import FastAPI, Request

app = FastAPI()
DEFAULTS_FILE = "/etc/pipelines/defaults.yaml"


@app.post("/pipelines")
async def create_pipeline(request: Request):
    with open(DEFAULTS_FILE) as handle:
        spec = yaml.load(handle, Loader=yaml.FullLoader)
    return {"stages": len(spec.get("stages", []))}
