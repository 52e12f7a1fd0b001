from fastapi import FastAPI, Request
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

app = FastAPI()
templates = Jinja2Templates(directory="templates")


@app.get("/welcome")
async def welcome(request: Request, message: str = ""):
    banner = Markup(message)
    return templates.TemplateResponse("welcome.html", {"request": request, "banner": banner})
