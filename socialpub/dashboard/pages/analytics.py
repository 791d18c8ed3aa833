"""Analytics: a period's figures of one mode as charts drawn on the server (daily
engagements, followers per platform, the top posts by engagements), each with its
figures in a table, from the analytics service of the API; and the charts' stylesheet
(socialpub/dashboard/charts.py)."""
from __future__ import annotations

from flask import Response, abort, render_template, request

from socialpub.analytics import service as analytics
from socialpub.dashboard import charts
from socialpub.dashboard.areas import chosen_mode, member_scope
from socialpub.dashboard.plumbing import blueprint, member_page
from socialpub.platforms import display_name

TOP = 10


def chosen_period() -> str:
    period = request.args.get("period", analytics.DEFAULT_PERIOD)
    if period not in analytics.PERIODS:
        abort(400, f"period must be one of {', '.join(analytics.PERIODS)}.")
    return period


@blueprint.route("/charts.css")
def charts_stylesheet():
    return Response(charts.stylesheet(), mimetype="text/css")


@member_page("/analytics/")
def analytics_page():
    scope, period = member_scope(), chosen_period()
    overview = analytics.overview.in_scope(scope, period=period)
    audience = analytics.audience.in_scope(scope, period=period)
    top = analytics.top_posts.in_scope(scope, metric="engagements", period=period, limit=TOP)
    days = [each["date"].strftime("%b %d") for each in overview["daily"]]
    platforms = [display_name(each["platform"]) for each in audience["by_platform"]]
    top_labels = [f"{display_name(post.platform)} · {post.published_at:%b %d %H:%M}" for post in top["posts"]]
    drawn = dict(
        engagements=charts.line("Engagements a day", days, {
            "Engagements": [each["engagements"] for each in overview["daily"]],
        }, label=f"Line chart: engagements each day of the last {analytics.PERIODS[period]} days"),
        followers=charts.bars("Followers per platform", platforms, {
            "Followers": [each["followers"] for each in audience["by_platform"]],
            "Net new in the period": [each["net_new"] for each in audience["by_platform"]],
        }, label="Bar chart: followers and net new followers on each platform"),
        top=charts.horizontal_bars("Top posts by engagements", top_labels, {
            "Engagements": [post.engagements for post in top["posts"]],
        }, label=f"Bar chart: the {len(top_labels)} posts with the most engagements in the period"),
    )
    tables = dict(
        engagements=[(each["date"].isoformat(), each["engagements"], each["posts"], each["followers"])
                     for each in overview["daily"]],
        followers=[(name, each["accounts"], each["followers"], each["net_new"])
                   for name, each in zip(platforms, audience["by_platform"], strict=True)],
        top=[(label, post.engagements, post.impressions, post.likes)
             for label, post in zip(top_labels, top["posts"], strict=True)],
    )
    return render_template("dashboard/analytics.html", overview=overview, audience=audience, drawn=drawn,
                           tables=tables, period=period, periods=analytics.PERIODS, mode=chosen_mode())
