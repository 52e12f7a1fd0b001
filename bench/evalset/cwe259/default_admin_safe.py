def create_admin(session, username="admin", password=""):
    if not password:
        raise ValueError("a password is required")
    session.add_user(username, password, role="admin")
