def refund(payment, actor):
    assert actor.has_perm("billing.refund")
    payment.refund()
