from flask import Flask, abort
from flask_login import current_user

from .db import db
from .models import User

app = Flask(__name__)


@app.post("/admin/users/<int:user_id>/delete")
def delete_user(user_id):
    user = User.query.get_or_404(user_id)
    assert isinstance(user, User)
    if not current_user.is_admin:
        abort(403)
    db.session.delete(user)
    db.session.commit()
    return "", 204
