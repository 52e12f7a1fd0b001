def transfer(source, target, amount):
    source.withdraw(amount)
    target.deposit(amount)
    assert source.balance >= 0
