DEBUG = False
ALLOWED_HOSTS = ["example.com"]
SECRET_KEY = "django-insecure-8f3k2l0q9w7e6r5t4y3u2i1o0p9a8s7d"
