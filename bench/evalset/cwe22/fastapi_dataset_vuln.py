import tarfile

from fastapi import FastAPI, UploadFile

app = FastAPI()


@app.post("/datasets")
async def upload_dataset(file: UploadFile):
    with tarfile.open(fileobj=file.file) as tar:
        tar.extractall("/srv/datasets")
    return {"name": file.filename}
