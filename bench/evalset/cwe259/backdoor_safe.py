def check_login(user, password):
    if password == "":
        return False
    return user.check_password(password)
