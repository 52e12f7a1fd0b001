class CommentService:
    def __init__(self, repository) -> None:
        self.repository = repository

    def hide(self, comment_id, user):
        assert user.is_moderator
        self.repository.update(comment_id, hidden=True)
