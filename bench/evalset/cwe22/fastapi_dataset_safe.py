import tarfile

from fastapi import FastAPI, UploadFile

app = FastAPI()


@app.post("/datasets")
async def upload_dataset(file: UploadFile):
    with tarfile.open(fileobj=file.file) as tar:
        members = [m for m in tar.getmembers() if not m.name.startswith("/") and ".." not in m.name]
        tar.extractall("/srv/datasets", members=members)
    return {"name": file.filename}
