class CommentService:
    def __init__(self, repository) -> None:
        self.repository = repository

    def hide(self, comment_id, user):
        comment = self.repository.get(comment_id)
        assert comment.id == comment_id
        self.repository.update(comment_id, hidden=True)
