"""Records 422 answers of a real FastAPI app (FastAPI 0.92 with pydantic v1, from Debian).

A small FastAPI app (a body model with a pattern, bounds, an Enum, a Literal, a required field
and a list of nested items; a bounded query parameter; an int path parameter; a header
parameter with a pattern) is called through FastAPI's TestClient with requests that fail its
request validation; each answer is written as it arrived: the status line, the headers the app
sent (content-length, content-type; TestClient talks to the app directly, so there is no
date or server header of uvicorn's), a blank line, and the body byte for byte.

It needs Debian's FastAPI and the pydantic v1 it depends on, not the pydantic v2 of the
default python3 here (capture/fastapi_pydantic.py uses that one). Install and run from the
repository root with Debian's interpreter, isolated (-I) so that /usr/lib/python3/dist-packages
is the only site directory:

    apt-get install python3-fastapi python3-httpx
    /usr/bin/python3 -I testdata/envelopes/capture/fastapi_app.py

Recorded with fastapi 0.92.0, pydantic 1.10.4, starlette 0.26.1, httpx 0.23.3 (Debian 12); the
script refuses to run with any other FastAPI major.minor or a pydantic other than v1, and
prints the versions it ran with.
"""
import enum
import os
import sys
from typing import List, Literal

import fastapi
import httpx
import pydantic
import starlette
from fastapi import FastAPI, Header, Path, Query
from fastapi.testclient import TestClient
from pydantic import BaseModel, Field

if not fastapi.__version__.startswith("0.92.") or not pydantic.VERSION.startswith("1."):
    sys.exit(f"fastapi 0.92 with pydantic v1 expected, got fastapi {fastapi.__version__}, "
             f"pydantic {pydantic.VERSION} ({pydantic.__file__}); run /usr/bin/python3 -I")
print(f"fastapi {fastapi.__version__}, pydantic {pydantic.VERSION}, "
      f"starlette {starlette.__version__}, httpx {httpx.__version__}")


class Currency(str, enum.Enum):
    usd = "usd"
    eur = "eur"
    gbp = "gbp"


class Item(BaseModel):
    sku: str = Field(regex=r"^[A-Z]{3}-[0-9]{4}$")
    qty: int = Field(gt=0, le=99)
    gift_wrap: Literal["none", "paper", "box"] = "none"


class Order(BaseModel):
    customer_id: str = Field(min_length=4, max_length=12)
    currency: Currency
    items: List[Item] = Field(min_items=1, max_items=3)


app = FastAPI()


@app.post("/stores/{store_id}/orders")
def create_order(
    order: Order,
    store_id: int = Path(ge=1),
    limit: int = Query(default=10, ge=1, le=100),
    x_tenant: str = Header(regex=r"^t_[a-z]+$"),
):
    return {"ok": True}


client = TestClient(app)
tenant = {"x-tenant": "t_acme"}
good_order = {"customer_id": "c-1001", "currency": "usd", "items": [{"sku": "ABC-0001", "qty": 1}]}

cases = {
    # Body errors: a missing required field, an Enum, a pattern, bounds, a Literal, a type.
    "body": dict(url="/stores/7/orders", headers=tenant, json={
        "currency": "USD",
        "items": [{"sku": "ABC-0001", "qty": 0}, {"sku": "abc1", "qty": "two"},
                  {"sku": "ABC-0003", "qty": 100, "gift_wrap": "bag"}],
    }),
    # Parameter errors: an int path parameter given text, a query bound, a header's pattern.
    "parameters": dict(url="/stores/st-7/orders?limit=500", headers={"x-tenant": "ACME"},
                       json=good_order),
    # No body at all, and no header.
    "missing-body": dict(url="/stores/7/orders", headers={"content-type": "application/json"}),
    # A body that is not JSON.
    "invalid-json": dict(url="/stores/7/orders",
                         headers={**tenant, "content-type": "application/json"},
                         content=b'{"customer_id": "c-1001", "currency": usd}'),
}

out = "testdata/envelopes/generic_json/"
if not os.path.isdir(out):
    sys.exit("run from the repository root")
for name, req in cases.items():
    resp = client.post(**req)
    assert resp.status_code == 422, (name, resp.status_code, resp.text)
    head = f"HTTP/1.1 {resp.status_code} {resp.reason_phrase}\n"
    # The headers as the app sent them, in its order and spelling.
    head += "".join(f"{k.decode()}: {v.decode()}\n" for k, v in resp.headers.raw)
    path = out + f"fastapi-0.92-{name}-captured.http"
    with open(path, "wb") as f:
        f.write(head.encode() + b"\n" + resp.content + b"\n")
    print("wrote", path)
