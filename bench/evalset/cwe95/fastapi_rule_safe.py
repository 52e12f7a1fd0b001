from fastapi import FastAPI

app = FastAPI()
RULES = []


@app.post("/rules")
def add_rule(threshold: int):
    RULES.append(eval(f"lambda x: x > {threshold}"))
    return {"rules": len(RULES)}
