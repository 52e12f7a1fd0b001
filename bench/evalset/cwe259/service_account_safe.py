class ServiceAccount:
    def __init__(self):
        self.username = "svc-backup"
        self.password = "********"
