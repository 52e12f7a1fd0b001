def archive_document(doc, user):
    assert doc.owner_id == user.id
    doc.archived = True
    doc.save()
