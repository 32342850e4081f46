"""Headless Debian Chromium for the browser tests (the site and rdmapcap report).

start_browser(test, width, height) gives a selenium driver that keeps the
browser's console log; severe_logs(driver) returns its SEVERE entries. A
missing python3-selenium or chromium-driver ends the test with a message
that says which package to install.
"""
import os
import sys

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
except ImportError as e:
    sys.exit(f"rdmalab: the browser tests need Debian's python3-selenium ({e}); "
             "run scripts/install-deps.sh")

CHROMEDRIVER = "/usr/bin/chromedriver"


def start_browser(test, width, height):
    if not os.access(CHROMEDRIVER, os.X_OK):
        sys.exit(f"rdmalab: the {test} test needs Debian's chromium-driver "
                 f"({CHROMEDRIVER} is missing); run scripts/install-deps.sh")
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    except WebDriverException as e:
        sys.exit(f"rdmalab: headless Chromium did not start: {e.msg or e}")
    driver.set_page_load_timeout(30)
    return driver


def severe_logs(driver):
    return [entry["message"] for entry in driver.get_log("browser")
            if entry.get("level") == "SEVERE"]
