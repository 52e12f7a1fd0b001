def transfer(source, target, amount, actor):
    assert actor.owns(source)
    source.withdraw(amount)
    target.deposit(amount)
