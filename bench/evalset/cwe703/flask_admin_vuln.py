from flask import Flask
from flask_login import current_user

from .db import db
from .models import User

app = Flask(__name__)


@app.post("/admin/users/<int:user_id>/delete")
def delete_user(user_id):
    assert current_user.is_admin, "admins only"
    db.session.delete(User.query.get_or_404(user_id))
    db.session.commit()
    return "", 204
