#!/usr/bin/env python3
"""Writes s3-sigv4-cases.json: S3 SigV4 signatures computed once by botocore, for S3SignerTests.

    python3 -m venv /tmp/sigv4-venv && /tmp/sigv4-venv/bin/pip install botocore
    /tmp/sigv4-venv/bin/python Tools/Tests/Fixtures/generate-s3-sigv4.py > Tools/Tests/Fixtures/s3-sigv4-cases.json

The idea: each case is a GET or HEAD request as an S3 client sends it (the key's path encoded the way
botocore's REST-XML serializer encodes a greedy `{Key+}` label, `percent_encode(key, safe="/~")`; the query
encoded with `percent_encode` and deliberately left unsorted). botocore's `S3SigV4Auth` signs it at a fixed
time, with the payload unsigned (`s3.payload_signing_enabled = False`, so `x-amz-content-sha256:
UNSIGNED-PAYLOAD`) unless the case asks for the empty body's hash. The file records the inputs, the
canonical request and the headers botocore added. The tests never need Python or the network.
"""
import datetime
import json
import sys
from unittest import mock

import botocore
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.utils import percent_encode

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

CASES = [
    dict(name="unicode, spaces and + in the key, path-style on a loopback port",
         method="GET", endpoint="http://127.0.0.1:9000", path="/images/photos/2024/a b+c é 日本.jpg",
         query=[], headers={}, region="us-east-1", time="20240229T235959Z", token=None),
    dict(name="reserved characters and a tilde in the key",
         method="GET", endpoint="http://127.0.0.1:9000", path="/images/odd/!$&'()*,;=:@~[x]%.png",
         query=[], headers={}, region="us-east-1", time="20250101T000000Z", token=None),
    dict(name="an unsorted query with encoded values and an empty one",
         method="GET", endpoint="https://s3.eu-west-1.amazonaws.com", path="/images/photo.jpg",
         query=[("versionId", "3/L4kqtJl40Nr8X8gdRQBpUMLUo"), ("response-content-type", "image/jpeg; q=0.9"),
                ("acl", ""), ("Zeta", "a+b c")],
         headers={}, region="eu-west-1", time="20230715T120501Z", token=None),
    dict(name="a session token, HEAD, virtual-hosted",
         method="HEAD", endpoint="https://images.s3.us-west-2.amazonaws.com", path="/photos/a b.jpg",
         query=[], headers={}, region="us-west-2", time="20221231T235959Z",
         token="FQoGZXIvYXdzEPT//////////wEaDExAMPLEtokenWithSlashes/And+Plus=="),
    dict(name="conditional GET with a Range and white space to trim",
         method="GET", endpoint="http://localhost:4566", path="/images/photos/x.jpg",
         query=[], headers={"If-None-Match": '  "9b2cf535f27731c974343645a3985328"  ', "Range": "bytes=0-  1023"},
         region="us-east-1", time="20200101T010203Z", token="short-token"),
    dict(name="signed empty payload (the hash of no bytes)",
         method="GET", endpoint="http://127.0.0.1:9000", path="/images/empty payload.txt",
         query=[], headers={}, region="us-east-1", time="20130524T000000Z", token=None, signed_payload=True),
]


def sign(case):
    url = case["endpoint"] + percent_encode(case["path"], safe="/~")
    if case["query"]:
        url += "?" + "&".join(f"{percent_encode(k)}={percent_encode(v)}" for k, v in case["query"])
    request = AWSRequest(method=case["method"], url=url, headers=dict(case["headers"]))
    request.context["client_config"] = Config(s3={"payload_signing_enabled": bool(case.get("signed_payload"))})
    auth = S3SigV4Auth(Credentials("AKIAIOSFODNN7EXAMPLE", SECRET, case["token"]), "s3", case["region"])
    moment = datetime.datetime.strptime(case["time"], "%Y%m%dT%H%M%SZ")
    with mock.patch("botocore.auth.get_current_datetime", return_value=moment):
        auth.add_auth(request)
    added = {k.lower(): v for k, v in request.headers.items() if k not in case["headers"]}
    # The canonical request botocore signed: the headers without the Authorization it added afterwards.
    del request.headers["Authorization"]
    canonical = auth.canonical_request(request)
    return dict(name=case["name"], method=case["method"], url=url, headers=case["headers"],
                region=case["region"], time=case["time"], sessionToken=case["token"],
                payloadHash=added["x-amz-content-sha256"], canonicalRequest=canonical,
                authorization=added.pop("authorization"), addedHeaders=added)


json.dump(dict(
    note=("S3 SigV4 known answers computed once with botocore " + botocore.__version__ + " (S3SigV4Auth, "
          "time fixed) by Tools/Tests/Fixtures/generate-s3-sigv4.py; access key AKIAIOSFODNN7EXAMPLE, secret "
          + SECRET + " (AWS's documentation example key)."),
    accessKeyID="AKIAIOSFODNN7EXAMPLE", secretAccessKey=SECRET,
    cases=[sign(case) for case in CASES]), sys.stdout, indent=2, ensure_ascii=False)
sys.stdout.write("\n")
