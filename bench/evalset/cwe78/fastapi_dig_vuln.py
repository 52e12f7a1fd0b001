import subprocess

from fastapi import FastAPI, HTTPException

app = FastAPI()


@app.get("/dns")
async def dig(domain: str):
    proc = subprocess.run(f"dig +short {domain}", shell=True, capture_output=True, text=True)
    return {"answer": proc.stdout.split()}
