from fastapi import FastAPI

app = FastAPI()
RULES = []


@app.post("/rules")
def add_rule(condition: str):
    RULES.append(eval(f"lambda x: {condition}"))
    return {"rules": len(RULES)}
