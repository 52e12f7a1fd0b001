def create_admin(session, username="admin", password="admin123"):
    session.add_user(username, password, role="admin")
