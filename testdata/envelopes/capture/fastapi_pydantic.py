"""Records FastAPI-shaped 422 bodies whose error lists pydantic v2 itself produced.

FastAPI is not installable here, so this reproduces what its request validation does with
pydantic's output (fastapi/_compat.py and fastapi/exception_handlers.py): each parameter is
validated by a TypeAdapter, the body by the model; each error list is taken with
errors(include_url=False), its loc prefixed with where the value travelled ("body", "query",
"path", "header"); a missing parameter is {"type": "missing", "loc": ..., "msg": "Field
required", "input": null}; the answer is 422 {"detail": [...]} as compact JSON. The error
objects (type, loc, msg, input, ctx) are pydantic's, unchanged. The MCP result wraps the same
body as a tool's structuredContent and text, as an MCP server that forwards a FastAPI answer
does.

Run from the repository root: python3 testdata/envelopes/capture/fastapi_pydantic.py
"""
import json
from typing import Annotated, Literal

import pydantic
from pydantic import BaseModel, Field, TypeAdapter, ValidationError


class Item(BaseModel):
    sku: Annotated[str, Field(pattern=r"^[A-Z]{3}-[0-9]{4}$")]
    qty: Annotated[int, Field(gt=0, le=99)]
    tags: list[Literal["gift_wrap", "fragile", "express"]] = []


class Order(BaseModel):
    customer_id: Annotated[str, Field(min_length=4, max_length=12)]
    currency: Literal["usd", "eur", "gbp"]
    items: Annotated[list[Item], Field(min_length=1, max_length=3)]


def errors(exc, prefix):
    return [{**e, "loc": prefix + tuple(e["loc"])} for e in exc.errors(include_url=False)]


def validate_body(data):
    try:
        Order.model_validate(data)
        return []
    except ValidationError as exc:
        return errors(exc, ("body",))


def validate_param(where, name, annotation, raw):
    if raw is None:
        return [{"type": "missing", "loc": (where, name), "msg": "Field required", "input": None}]
    try:
        TypeAdapter(annotation).validate_python(raw)
        return []
    except ValidationError as exc:
        return errors(exc, (where, name))


def body(errs):
    # FastAPI's JSONResponse: json.dumps(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return json.dumps({"detail": errs}, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=str)


def http(status, text, content):
    return (f"HTTP/1.1 {status} {text}\ncontent-length: {len(content.encode())}\n"
            f"content-type: application/json\ndate: Tue, 05 May 2026 16:52:40 GMT\nserver: uvicorn\n\n{content}\n")


out = "testdata/envelopes/"

order_errs = validate_body({
    "customer_id": "c1",
    "currency": "USD",
    "items": [{"sku": "ABC-0001", "qty": 0}, {"sku": "abc1", "qty": "two"},
              {"sku": "ABC-0003", "qty": 1}, {"sku": "ABC-0004", "qty": 1, "tags": ["Gift-Wrap"]}],
})
with open(out + "generic_json/fastapi-pydantic-v2-body-captured.http", "w") as f:
    f.write(http(422, "Unprocessable Entity", body(order_errs)))

param_errs = (validate_param("path", "store_id", Annotated[int, Field(ge=1)], "st-7")
              + validate_param("query", "limit", Annotated[int, Field(ge=1, le=100)], "500")
              + validate_param("query", "status", Literal["open", "shipped"], "closed")
              + validate_param("header", "x-tenant", Annotated[str, Field(pattern=r"^t_[a-z]+$")], None)
              + [{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
with open(out + "generic_json/fastapi-pydantic-v2-parameters-captured.http", "w") as f:
    f.write(http(422, "Unprocessable Entity", body(param_errs)))

tool_body = body(validate_body({"currency": "eur", "items": [{"sku": "ABC-0001", "qty": 500}]}))
result = {"content": [{"type": "text", "text": tool_body}],
          "structuredContent": json.loads(tool_body), "isError": True}
with open(out + "mcp/tool-error-fastapi-detail-structured-content.http", "w") as f:
    f.write("HTTP/1.1 200 OK\nContent-Type: application/json\n\n" + json.dumps(result, separators=(",", ":")) + "\n")

print("pydantic", pydantic.VERSION)
