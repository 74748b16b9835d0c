"""schemathesis hooks for `make contract` (run.py loads them through SCHEMATHESIS_HOOKS).

Every whole number a request may state that counts something (quantities, multipliers,
pages, sizes, deadlines) is also sent at its edges: 0, ±1, the quantity ceiling (10^12) and
one past it, and the 64-bit extremes. Each drawn body or query keeps its own values or takes
one of these in one such field, so every run meets them in every operation that has one
(issue 26): none may answer 5xx, and every answer must match the document.
"""

import hypothesis.strategies as st
import schemathesis

EDGES = [0, 1, -1, 10**12, 10**12 + 1, 2**63 - 1, -(2**63)]
COUNTED = ("quantity", "multiplier", "page", "size", "expires_in_seconds", "limit")


def _counted(key: str) -> bool:
    return any(word in key for word in COUNTED)


def _variants(value, as_text: bool):
    if not isinstance(value, dict):
        return st.just(value)
    keys = [k for k, v in value.items() if _counted(k) and (isinstance(v, int) or isinstance(v, str) or v is None)]
    if not keys:
        return st.just(value)

    def with_edge(pair):
        key, edge = pair
        changed = dict(value)
        changed[key] = str(edge) if as_text else edge
        return changed

    edged = st.tuples(st.sampled_from(keys), st.sampled_from(EDGES)).map(with_edge)
    return st.one_of(st.just(value), edged)


@schemathesis.hook
def flatmap_body(ctx, body):
    return _variants(body, as_text=False)


@schemathesis.hook
def flatmap_query(ctx, query):
    # A query with a parameter the operation does not declare is a negative case of
    # schemathesis's own (an extra parameter the server must refuse): left as drawn.
    declared = ctx.operation.query if ctx is not None and ctx.operation is not None else None
    if isinstance(query, dict) and declared is not None and any(k not in declared for k in query):
        return st.just(query)
    return _variants(query, as_text=True)
