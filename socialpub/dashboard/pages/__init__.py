"""The dashboard's pages, one module each; importing this registers their routes on
the one blueprint (socialpub.dashboard.plumbing.blueprint)."""
from socialpub.dashboard.pages import (
    accounts, analytics, api_keys, autoreply, brand_context, calendar, competitors, crisis, crisis_contacts, feeds,
    influencer_payments, influencers, linkinbio, listening, overview, posts, sign_in, templates, uploads, webhooks,
)

__all__ = ["accounts", "analytics", "api_keys", "autoreply", "brand_context", "calendar", "competitors", "crisis",
           "crisis_contacts", "feeds", "influencer_payments", "influencers", "linkinbio", "listening", "overview",
           "posts", "sign_in", "templates", "uploads", "webhooks"]
