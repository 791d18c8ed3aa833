"""The scopes of SPEC.md section 5, exact values (cross-cutting: the contract's security
requirements name them)."""

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
