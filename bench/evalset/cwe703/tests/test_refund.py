from myapp.billing import refund


def test_refund_marks_payment(payment, finance_user):
    refund(payment, finance_user)
    assert payment.refunded
