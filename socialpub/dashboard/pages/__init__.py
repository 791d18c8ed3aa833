"""The dashboard's pages, one module each; importing this registers their routes on
the one blueprint (socialpub.dashboard.plumbing.blueprint)."""
from socialpub.dashboard.pages import (
    accounts, api_keys, brand_context, crisis_contacts, influencer_payments, overview, sign_in, webhooks,
)

__all__ = ["accounts", "api_keys", "brand_context", "crisis_contacts", "influencer_payments", "overview", "sign_in",
           "webhooks"]
