# Engine probe: Selenium's element lookups evaluate an XPath expression only with By.XPATH.
from flask import Flask, request
from selenium import webdriver
from selenium.webdriver.common.by import By

app = Flask(__name__)
driver = webdriver.Chrome()


@app.route("/find")
def find():
    text = request.args["text"]
    driver.find_elements(By.XPATH, f"//*[contains(text(), '{text}')]")  # $ xpath
    driver.find_element(by=By.XPATH, value="//a[@title='" + text + "']")  # $ xpath
    driver.find_element("xpath", "//p[.='%s']" % text)  # $ xpath
    driver.find_element(By.ID, text)  # ok xpath (an id, not an expression)
    driver.find_elements(By.XPATH, "//a[@class='next']")  # ok xpath (a constant expression)
    driver.find_element(value=text)  # ok xpath (by defaults to By.ID)
    return "found"
