def archive_document(doc, user):
    if doc.owner_id != user.id:
        raise PermissionError("not the owner")
    doc.archived = True
    doc.save()
