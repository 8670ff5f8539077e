"""Schemathesis hooks for Tools/scripts/fuzz-api.sh: the device secret.

Device calls carry `X-Nearby-Device-Secret`, a security scheme whose value only the server's
answer to `registerDevice` knows, so no generated case can hold a working one. These hooks
remember the secret of every device registered during the run (by the fuzzer or here) and
give device calls a real device and its secret most of the time, so the fuzzer gets past
authentication into the report handler; one case in four keeps the generated id (404 paths).

The event stream (`events`) answers 200 with a stream that stays open for good, which no
request timeout should have to end: its cases get a real device with a wrong secret, so the
server parses `Last-Event-ID` and the id (400 when malformed) and then answers 404, and no
stream is opened.
"""

import json
import os
import urllib.request
import zlib

import schemathesis

BASE = os.environ["NEARBY_FUZZ_URL"]
KEY = os.environ["NEARBY_FUZZ_API_KEY"]
SECRET = "X-Nearby-Device-Secret"

# Device id (lower case) -> secret, for devices registered during the run.
secrets: dict[str, str] = {}
long_lived: list[str] = []


def register() -> str:
    request = urllib.request.Request(
        BASE + "/v1/devices", method="POST", headers={"X-Nearby-API-Key": KEY}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        body = json.load(answer)
    secrets[body["id"].lower()] = body["secret"]
    return body["id"]


def device_for_reports() -> str:
    if not long_lived:
        long_lived.append(register())
    return long_lived[0]


@schemathesis.hook
def after_call(context, case, response):
    if case.operation.path == "/v1/devices" and response.status_code == 201:
        body = response.json()
        secrets[body["id"].lower()] = body["secret"]
    if case.operation.method.upper() == "DELETE" and "{id}" in case.operation.path:
        device = str((case.path_parameters or {}).get("id", "")).lower()
        if response.status_code == 204 and long_lived and device == long_lived[0].lower():
            long_lived.clear()


@schemathesis.hook
def before_call(context, case, **kwargs):
    path = case.operation.path
    if "{id}" not in path:
        return
    parameters = dict(case.path_parameters or {})
    headers = dict(case.headers or {})
    device = str(parameters.get("id", ""))
    if device.lower() not in secrets:
        # One case in four (decided by the case itself, so a seed replays it) keeps its id.
        keep = zlib.crc32(repr(sorted(parameters.items())).encode()) % 4 == 0
        if not keep:
            device = register() if case.operation.method.upper() == "DELETE" else device_for_reports()
            parameters["id"] = device
    headers[SECRET] = secrets.get(device.lower(), "not-a-secret")
    if path.endswith("/events"):
        headers[SECRET] = "wrong-secret"
    case.path_parameters = parameters
    case.headers = headers
