"""schemathesis hooks for `make contract` (run.py loads them through SCHEMATHESIS_HOOKS).

Every whole number a request may state that counts something (quantities, multipliers,
pages, sizes, deadlines) is also sent at its edges: 0, ±1, the quantity ceiling (10^12) and
one past it, and the 64-bit extremes. Each drawn body or query keeps its own values or takes
one of these in one such field, so every run meets them in every operation that has one
(issue 26): none may answer 5xx, and every answer must match the document.

A drawn case stays a positive one: an edge goes only into a field the document types as a
whole number, and only where it lies within the field's declared bounds. A value past a
declared bound is schemathesis's own negative case, which its coverage phase sends anyway.
(An i64 edge put into a bounded decimal such as `exchange_tick_size` was a schema-invalid
case judged as a valid one, and failed the run when it was drawn.)
"""

import json
from pathlib import Path

import hypothesis.strategies as st
import schemathesis

DOCUMENT = json.loads((Path(__file__).resolve().parent.parent.parent / "web/openapi.json").read_text())

EDGES = [0, 1, -1, 10**12, 10**12 + 1, 2**63 - 1, -(2**63)]
COUNTED = ("quantity", "multiplier", "page", "size", "expires_in_seconds", "limit")


def _resolve(schema: dict) -> dict:
    while "$ref" in schema:
        schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _operation(ctx) -> dict:
    if ctx is None or ctx.operation is None:
        return {}
    return DOCUMENT["paths"].get(ctx.operation.path, {}).get(ctx.operation.method.lower(), {})


def _body_fields(ctx) -> dict:
    content = _operation(ctx).get("requestBody", {}).get("content", {}).get("application/json", {})
    return _resolve(content.get("schema", {})).get("properties", {})


def _query_fields(ctx) -> dict:
    return {p["name"]: p.get("schema", {}) for p in _operation(ctx).get("parameters", []) if p.get("in") == "query"}


def _edges(value, schema: dict, as_text: bool) -> list:
    """The edges a field may take in place of `value`, keeping the case as valid as it was.

    None unless the document types the field as a whole number and the drawn value is itself
    valid there: a negative case may be negative because of this very field.
    """
    schema = _resolve(schema)
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    if "integer" not in types:
        return []
    low, high = schema.get("minimum", -(2**63)), schema.get("maximum", 2**63 - 1)
    if as_text and isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            return []
    valid = (isinstance(value, int) and not isinstance(value, bool) and low <= value <= high) or (
        value is None and "null" in types
    )
    return [e for e in EDGES if low <= e <= high] if valid else []


def _variants(value, fields: dict, as_text: bool):
    if not isinstance(value, dict):
        return st.just(value)
    pairs = [
        (k, e)
        for k, v in value.items()
        if any(word in k for word in COUNTED)
        for e in _edges(v, fields.get(k, {}), as_text)
    ]
    if not pairs:
        return st.just(value)

    def with_edge(pair):
        key, edge = pair
        changed = dict(value)
        changed[key] = str(edge) if as_text else edge
        return changed

    return st.one_of(st.just(value), st.sampled_from(pairs).map(with_edge))


@schemathesis.hook
def flatmap_body(ctx, body):
    return _variants(body, _body_fields(ctx), as_text=False)


@schemathesis.hook
def flatmap_query(ctx, query):
    # A query with a parameter the operation does not declare is a negative case of
    # schemathesis's own (an extra parameter the server must refuse): left as drawn.
    declared = ctx.operation.query if ctx is not None and ctx.operation is not None else None
    if isinstance(query, dict) and declared is not None and any(k not in declared for k in query):
        return st.just(query)
    return _variants(query, _query_fields(ctx), as_text=True)
