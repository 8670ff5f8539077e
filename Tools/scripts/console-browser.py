"""The web console end to end in headless Chromium (run by console-browser.sh).

Environment: NEARBY_CONSOLE_URL (the server), NEARBY_CONSOLE_KEY (an admin key),
NEARBY_CONSOLE_SCREENSHOTS (where each page's screenshots go, at 1280 and 360 px wide).
Every step checks what the page shows; the first failure ends the run with a non-zero exit.
"""

import datetime
import json
import os
import sys
import urllib.request
import uuid

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = os.environ["NEARBY_CONSOLE_URL"]
KEY = os.environ["NEARBY_CONSOLE_KEY"]
SHOTS = os.environ["NEARBY_CONSOLE_SCREENSHOTS"]
UID = "0102030405060708090a" + "aabbccddeeff"


def api(method, path, body=None, headers=None):
    """One API call with the admin key; the answer's JSON."""
    request = urllib.request.Request(BASE + path, method=method)
    request.add_header("X-Nearby-API-Key", KEY)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    data = None
    if body is not None:
        request.add_header("Content-Type", "application/json")
        data = json.dumps(body).encode()
    with urllib.request.urlopen(request, data, timeout=20) as answer:
        text = answer.read()
    return json.loads(text) if text else None


def shoot(driver, name):
    """The page at 1280 px and at 360 px wide (a phone's viewport), whole height."""
    for width in (1280, 360):
        metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        metrics["height"] = min(max(height, 600), 6000)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        driver.save_screenshot(os.path.join(SHOTS, f"{name}-{width}.png"))
        width_used = driver.execute_script("return document.documentElement.scrollWidth")
        expect(width_used <= width, f"{name} is {width_used} px wide in a {width} px viewport")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def submit(driver, wait, button):
    """Clicks a form's button and waits until the page it submitted from is gone: a click
    returns before the browser has loaded the answer, and on a busy machine the next lookup
    would read the old page."""
    # A mark on the old document's window, rather than Selenium's staleness_of: Chromium can
    # answer a lookup on a node of a document being replaced with a generic inspector error
    # ("Node with given id does not belong to the document") that staleness_of does not take
    # for staleness. A script that cannot run mid-navigation just means "not yet".
    driver.execute_script("window.nearbyOldPage = true")
    button.click()

    def replaced(driver):
        try:
            return driver.execute_script(
                "return window.nearbyOldPage !== true && document.readyState === 'complete'")
        except WebDriverException:
            return False

    wait.until(replaced)


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def main():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--hide-scrollbars", "--window-size=1280,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    wait = WebDriverWait(driver, 30)
    try:
        # Sign in: a bad key first (the error is next to the field), then the admin key.
        driver.get(BASE + "/console")
        expect("/console/sign-in" in driver.current_url, "not sent to sign in")
        driver.find_element(By.ID, "key").send_keys("nk_wrong")
        submit(driver, wait, driver.find_element(By.CSS_SELECTOR, "form button[type=submit]"))
        key_error = wait.until(
            expected_conditions.presence_of_element_located((By.ID, "key-error")))
        expect("Unknown or revoked" in key_error.text,
               "no error for a bad key")
        shoot(driver, "01-sign-in")
        driver.find_element(By.ID, "key").send_keys(KEY)
        submit(driver, wait, driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]"))
        wait.until(expected_conditions.presence_of_element_located((By.CLASS_NAME, "figures")))
        shoot(driver, "02-overview")

        # Register a beacon.
        driver.get(BASE + "/console/beacons/new")
        Select(driver.find_element(By.ID, "type")).select_by_value("eddystone")
        driver.find_element(By.ID, "id").send_keys(UID)
        driver.find_element(By.ID, "description").send_keys("Front door <b>café</b>")
        shoot(driver, "03-register")
        submit(driver, wait, driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]"))
        wait.until(expected_conditions.title_contains("Beacon"))
        expect("Front door <b>café</b>" in driver.page_source.replace("&lt;", "<")
               .replace("&gt;", ">"), "the description is not shown as text")

        # Attach data.
        driver.find_element(By.ID, "namespacedType").send_keys("cafe/menu")
        driver.find_element(By.ID, "data").send_keys("soup of the day")
        submit(driver, wait, driver.find_element(
            By.CSS_SELECTOR, "form[action='/console/beacon/attachments'] button"))
        wait.until(expected_conditions.text_to_be_present_in_element(
            (By.CSS_SELECTOR, "main"), "Attachment added."))
        expect("cafe/menu" in driver.find_element(By.TAG_NAME, "main").text, "no attachment")
        shoot(driver, "04-beacon")
        driver.get(BASE + "/console/beacons")
        expect("Front door" in driver.find_element(By.TAG_NAME, "main").text, "not listed")
        shoot(driver, "05-beacons")

        # Make the namespace public.
        driver.get(BASE + "/console/namespaces")
        submit(driver, wait,
               driver.find_element(By.CSS_SELECTOR, "button[aria-label='Make cafe public']"))
        wait.until(expected_conditions.text_to_be_present_in_element(
            (By.CSS_SELECTOR, "main"), "Namespace cafe changed."))
        expect("public" in driver.find_element(By.CSS_SELECTOR, "tbody").text, "not public")
        shoot(driver, "06-namespaces")

        # Create a key (shown once), then revoke it.
        driver.get(BASE + "/console/keys")
        Select(driver.find_element(By.ID, "role")).select_by_value("client")
        driver.find_element(By.ID, "label").send_keys("kiosk")
        submit(driver, wait,
               driver.find_element(By.CSS_SELECTOR, "form[action='/console/keys'] button"))
        new_key = wait.until(expected_conditions.presence_of_element_located((By.ID, "new-key")))
        expect(new_key.text.startswith("nk_"), "no new key shown")
        shoot(driver, "07-key-created")
        revoke = driver.find_elements(By.CSS_SELECTOR, "button[aria-label^='Revoke key']")[-1]
        submit(driver, wait, revoke)
        wait.until(expected_conditions.text_to_be_present_in_element(
            (By.CSS_SELECTOR, "main"), "revoked"))
        shoot(driver, "08-keys")

        # The live view: two devices meet, the subscriber finds the publisher's message.
        driver.get(BASE + "/console/live")
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "state"), "Listening"))
        alice = api("POST", "/v1/devices")
        bob = api("POST", "/v1/devices")
        published = api(
            "POST", f"/v1/devices/{alice['id']}/report",
            {"publish": [{"id": str(uuid.uuid4()),
                          "message": {"content": "aGk=", "type": "greeting"}}]},
            {"X-Nearby-Device-Secret": alice["secret"]})
        token = published["directives"]["token"]
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        api("POST", f"/v1/devices/{bob['id']}/report",
            {"subscribe": [{"id": str(uuid.uuid4())}],
             "sightings": [{"token": token, "medium": "ble", "time": now}]},
            {"X-Nearby-Device-Secret": bob["secret"]})
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "events"), "found"))
        expect("greeting" in driver.find_element(By.ID, "events").text, "no message type")
        shoot(driver, "09-live")

        # Keyboard: the skip link is the first thing focused.
        driver.get(BASE + "/console")
        driver.find_element(By.TAG_NAME, "body").send_keys("\t")
        focused = driver.switch_to.active_element
        expect(focused.get_attribute("class") == "skip", "the skip link is not first")

        # Sign out.
        submit(driver, wait, driver.find_element(By.CSS_SELECTOR, "header form button"))
        wait.until(expected_conditions.presence_of_element_located((By.ID, "key")))
    except Exception:
        driver.save_screenshot(os.path.join(SHOTS, "failure.png"))
        # Where it stopped, for the CI log: the page and what it said.
        try:
            text = driver.find_element(By.TAG_NAME, "body").text
        except Exception:
            text = "(no body)"
        print(f"console browser: failed on {driver.current_url} ({driver.title!r}):\n"
              f"{text[:800]}", file=sys.stderr)
        raise
    finally:
        driver.quit()
    print("console browser: 9 pages checked, screenshots in " + SHOTS)


if __name__ == "__main__":
    sys.exit(main())
