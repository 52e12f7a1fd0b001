import pandas as pd


def monthly_report(engine, month):
    sql = "SELECT day, revenue FROM daily_revenue WHERE month = '{}'".format(int(month))
    return pd.read_sql(sql, engine)
