"""Auto-reply: the workspace's rules of one mode, in the order they are tried, each
enabled or disabled through the auto-reply service of the API."""
from __future__ import annotations

from socialpub.autoreply import service as autoreply
from socialpub.dashboard.areas import RecordsPage
from socialpub.dashboard.plumbing import member_page

RULES = RecordsPage("dashboard/autoreply.html", "rules", autoreply.list_rules, "dashboard.autoreply_page")


@member_page("/auto-reply/")
def autoreply_page():
    return RULES.show()


@member_page("/auto-reply/<rule_id>/<any(enable, disable):action>", methods=["POST"])
def autoreply_toggle(rule_id, action):
    return RULES.change(autoreply.update_rule, f"autoreply.{action}d",
                        lambda rule: f"{'Enabled' if rule.enabled else 'Disabled'} the rule {rule.name}.",
                        rule_id=rule_id, enabled=action == "enable")
