"""Listening: a period's signals of one mode, their volume and sentiment day by day
as a chart drawn on the server, the totals beside the period before, the monitors and
the latest signals, from the listening services of the API."""
from __future__ import annotations

from flask import abort, render_template, request

from socialpub.dashboard import charts
from socialpub.dashboard.areas import chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page
from socialpub.listening import monitors, signals, stats

SHOWN = 20


@member_page("/listening/")
def listening_page():
    period = request.args.get("period", stats.DEFAULT_PERIOD)
    if period not in stats.PERIODS:
        abort(400, f"period must be one of {', '.join(stats.PERIODS)}.")
    scope = member_scope()
    figures = stats.get_stats.in_scope(scope, period=period)
    volume = stats.daily_volume.in_scope(scope, period=period)
    days = [each["date"].strftime("%b %d") for each in volume["days"]]
    drawn = dict(
        volume=charts.bars("Signals a day, by sentiment", days, {
            label.capitalize(): [each[label] for each in volume["days"]] for label in ("positive", "neutral", "negative")
        }, stacked=True, colours=charts.SENTIMENT_COLOURS, label=f"Stacked bar chart: signals each day of the last {stats.PERIODS[period]} days, "
                               "by sentiment"),
        sentiment=charts.line("Net sentiment a day (positive minus negative, of all)", days, {
            "Net sentiment": [each["net_sentiment"] for each in volume["days"]],
        }, y_labels=[-1, -0.5, 0, 0.5, 1], label="Line chart: net sentiment each day, from -1 (all negative) to 1 (all positive)"),
    )
    found = monitors.list_monitors.in_scope(scope, limit=SHOWN)
    latest = signals.list_signals.in_scope(scope, limit=SHOWN)
    tables = [(each["date"].isoformat(), each["signals"], each["positive"], each["neutral"], each["negative"],
               each["net_sentiment"]) for each in volume["days"]]
    return render_template("dashboard/listening.html", figures=figures, tables=tables, drawn=drawn,
                           monitors=found.items, signals=latest.items, period=period, periods=stats.PERIODS,
                           mode=chosen_mode())
