"""The scopes an API key can hold, exact values (cross-cutting). Each operation of the
contract (`openapi/paths/`) requires one of them in its security requirement
(tests/contract/test_every_operation.py checks that every scope it names is listed
here); some name areas that have no operations in the contract yet (`crisis`,
`listening`, ...), and keys can hold them all the same."""

ALL_SCOPES: tuple[str, ...] = (
    "posts:read",
    "posts:write",
    "posts:publish",
    "analytics:read",
    "conversations:read",
    "conversations:write",
    "workspace:read",
    "templates:read",
    "templates:write",
    "calendar:read",
    "calendar:write",
    "crisis:read",
    "crisis:write",
    "listening:read",
    "listening:write",
    "competitors:read",
    "competitors:write",
    "linkinbio:read",
    "linkinbio:write",
    "influencers:read",
    "influencers:write",
    "search:read",
    "uploads:read",
    "uploads:write",
    "media:read",
)

PLANS: tuple[str, ...] = ("free", "pro", "business", "enterprise")
API_PLANS: frozenset[str] = frozenset({"business", "enterprise"})
