def delete_document(user, obj):
    assert user.is_admin
    obj.delete()
