"""The dashboard's charts: drawn as SVG on the server by pygal (pinned in
pyproject.toml), put in the page as they are, with no script and no inline style, so
the dashboard's Content-Security-Policy (`default-src 'self'`) stays as it is.

pygal writes into every chart a <script> (its tooltips' configuration) and a <style>
(the chart's look, scoped to the chart's id). Neither would run or apply under the
policy: the script and the style are taken out of each chart, and the look, the same
rules scoped to `svg.pygal-chart` instead of one chart's id, is served once as a
stylesheet of the dashboard's own (`/dashboard/charts.css`). The figures a chart
draws are also in a table beside it, for those who would rather read them.
"""
from __future__ import annotations

import functools
import xml.etree.ElementTree as ElementTree

import pygal
from markupsafe import Markup
from pygal.style import Style

COLOURS = ("#1f5fbf", "#b3261e", "#17663a", "#8a5a00", "#6b3fa0", "#00707a", "#5a6573", "#c2185b")
STYLE = Style(
    background="#ffffff", plot_background="#ffffff", foreground="#1d232b", foreground_strong="#1d232b",
    foreground_subtle="#5a6573", colors=COLOURS, font_family="system-ui, -apple-system, 'Segoe UI', sans-serif",
    label_font_size=12, major_label_font_size=12, legend_font_size=13, title_font_size=15, value_font_size=12,
    guide_stroke_color="#d5dbe3", major_guide_stroke_color="#aab4c0", opacity=".85", opacity_hover=".95",
    transition="0ms",
)
CONFIG = dict(
    js=[], disable_xml_declaration=True, style=STYLE, width=760, height=320, margin=12, legend_at_bottom=True,
    show_minor_x_labels=False, truncate_legend=40, truncate_label=30,
    print_zeroes=False, tooltip_fancy_mode=False,
)
DROPPED = ("script", "style")
# Series colours that mean something: COLOURS' index for each series, in order.
SENTIMENT_COLOURS = (2, 6, 1)  # positive green, neutral grey, negative red


def whole_labels(values) -> list[int]:
    """The y axis of counts: whole numbers from 0, about five steps, whatever the top."""
    top = max([0, *[value for value in values if value is not None]])
    step = max(1, -(-top // 5))
    return list(range(0, top + step, step)) if top else [0, 1]


def _chart(kind, title: str, labels, series: dict, **options):
    chart = kind(title=title, **{**CONFIG, **options})
    chart.x_labels = [str(label) for label in labels]
    if len(chart.x_labels) > 12:
        step = -(-len(chart.x_labels) // 8)
        chart.x_labels_major = chart.x_labels[::step]
    for name, values in series.items():
        chart.add(name, list(values))
    return chart


def _svg(chart, label: str, colours=None) -> Markup:
    """The chart's SVG element, without its script, style and comments, named for
    assistive technology (`label`); series i drawn in COLOURS[colours[i]] if given."""
    root = chart.render_tree()
    swap = {f"color-{index}": f"color-{colour}" for index, colour in enumerate(colours or ())}
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag in DROPPED or child.tag is ElementTree.Comment:
                parent.remove(child)
    for element in root.iter():
        element.attrib.pop("style", None)  # pygal hides its tooltip with an inline style
        if swap and "color-" in element.get("class", ""):
            element.set("class", " ".join(swap.get(name, name) for name in element.get("class").split()))
    root.attrib.pop("id", None)
    root.set("role", "img")
    root.set("aria-label", label)
    root.set("focusable", "false")
    return Markup(ElementTree.tostring(root, encoding="unicode"))


def line(title: str, labels, series: dict, *, label: str, y_labels=None, colours=None) -> Markup:
    """A line a series; counts (the default y axis) on whole numbers from 0."""
    y_labels = y_labels or whole_labels(value for values in series.values() for value in values)
    return _svg(_chart(pygal.Line, title, labels, series, show_dots=len(labels) <= 31, dots_size=2.5,
                       show_legend=len(series) > 1, y_labels=y_labels), label, colours)


def bars(title: str, labels, series: dict, *, label: str, stacked: bool = False, colours=None) -> Markup:
    kind = pygal.StackedBar if stacked else pygal.Bar
    tops = [sum(v or 0 for v in day) for day in zip(*series.values())] if stacked else \
        [value for values in series.values() for value in values]
    return _svg(_chart(kind, title, labels, series, y_labels=whole_labels(tops)), label, colours)


def horizontal_bars(title: str, labels, series: dict, *, label: str) -> Markup:
    return _svg(_chart(pygal.HorizontalBar, title, labels, series, show_legend=len(series) > 1,
                       height=max(200, 44 * len(labels) + 90),
                       y_labels=whole_labels(value for values in series.values() for value in values)), label)


@functools.cache
def stylesheet() -> str:
    """pygal's rules for a chart of STYLE, scoped to every chart (`svg.pygal-chart`)."""
    chart = pygal.Bar(**CONFIG)
    for index in range(len(COLOURS)):  # a rule per series colour: one series each
        chart.add(str(index), [1])
    root = chart.render_tree()
    prefix = f"#{root.get('id')}"
    text = "\n".join(element.text or "" for element in root.iter("style"))
    return text.replace(prefix, "svg.pygal-chart") + "\nsvg.pygal-chart .tooltip{display:none}\n"
