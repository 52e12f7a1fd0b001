class PermissionDenied(Exception):
    pass


def delete_document(user, obj):
    if not user.is_admin:
        raise PermissionDenied()
    obj.delete()
