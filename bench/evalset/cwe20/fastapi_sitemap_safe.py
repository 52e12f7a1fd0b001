from defusedxml import ElementTree as ET

from fastapi import FastAPI, Request

app = FastAPI()


@app.post("/sitemaps/validate")
async def validate_sitemap(request: Request):
    body = await request.body()
    urlset = ET.fromstring(body)
    ns = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [loc.text for loc in urlset.findall("sm:url/sm:loc", ns)]
    return {"urls": len(locs), "sample": locs[:5]}
