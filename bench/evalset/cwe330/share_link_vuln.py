import random
import string

from flask import Blueprint, g, url_for

from .models import Document, ShareLink, db

bp = Blueprint("sharing", __name__)


@bp.post("/documents/<int:doc_id>/share")
def share_document(doc_id):
    document = Document.query.filter_by(id=doc_id, owner_id=g.user.id).first_or_404()
    slug = "".join(random.choices(string.ascii_lowercase + string.digits, k=12))
    db.session.add(ShareLink(slug=slug, document=document))
    db.session.commit()
    return {"url": url_for("sharing.open_link", slug=slug, _external=True)}
