"""Auto-reply: the workspace's rules of one mode, in the order they are tried, each
enabled or disabled through the auto-reply service of the API."""
from __future__ import annotations

from flask import render_template

from socialpub.autoreply import service as autoreply
from socialpub.dashboard.areas import acted, chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page

SHOWN = 100


@member_page("/auto-reply/")
def autoreply_page():
    found = autoreply.list_rules.in_scope(member_scope(), limit=SHOWN)
    return render_template("dashboard/autoreply.html", rules=found.items, total=found.total, mode=chosen_mode())


@member_page("/auto-reply/<rule_id>/<any(enable, disable):action>", methods=["POST"])
def autoreply_toggle(rule_id, action):
    rule = autoreply.update_rule.in_scope(member_scope(), rule_id=rule_id,
                                 enabled=action == "enable")
    said = "Enabled" if rule.enabled else "Disabled"
    return acted(f"autoreply.{action}d", f"{said} the rule {rule.name}.", "dashboard.autoreply_page",
                 target_id=rule.id)
