import pandas as pd


def monthly_report(engine, month):
    sql = "SELECT day, revenue FROM daily_revenue WHERE month = '{}'".format(month)
    return pd.read_sql(sql, engine)
