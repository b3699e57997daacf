"""The dashboard's charts as geometry: dicts of rectangles, points and labels that the template
draws as SVG on the server (no script, no CDN). Every chart shares one frame
(:func:`chart_frame`: width, plot height, a label row) and one scale (:func:`scaled`), and places
its bars or points in equal slots (:func:`slot_x`).

Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies) and never the
only cue: the outcome bars carry patterns (retried hatched, dead dotted) and the depth lines
dashes, each named in a legend.
"""

CHART_WIDTH = 600
CHART_HEIGHT = 120
CHART_LABEL_HEIGHT = 16
#: Okabe & Ito, "Color Universal Design" (2008): blue, orange, bluish green, vermillion, reddish
#: purple, black; yellow and sky blue are left out (too light on the admin's white background).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#000000")
#: stroke-dasharray of the depth lines, one per palette colour: a second cue besides colour.
DASHES = ("none", "8 4", "2 3", "10 3 2 3", "5 5", "1 6")
#: The outcome chart's series, bottom to top: (key, label, fill colour, SVG pattern or None).
OUTCOMES = (
    ("succeeded", "Succeeded", PALETTE[0], None),
    ("retried", "Retried (failed attempts run again)", PALETTE[1], "headgate-hatch"),
    ("dead", "Dead", PALETTE[3], "headgate-dots"),
)
#: Queues drawn as lines in the depth chart; the rest are listed under it.
MAX_DEPTH_LINES = len(PALETTE)
#: The depth chart keeps this much of its width on the right for the lines' queue names, cut to
#: LINE_LABEL_CHARS characters (the table under the chart has the full names).
LINE_LABEL_MARGIN = 130
LINE_LABEL_CHARS = 15
LINE_LABEL_GAP = 11


def scaled(value, peak, height=CHART_HEIGHT):
    """``value`` as a height in a plot of ``height`` whose top is ``peak`` (0 when nothing)."""
    return round(height * value / peak, 1) if peak else 0


def slot_x(index, count, width=CHART_WIDTH):
    """``(left edge, slot width)`` of slot ``index`` of ``count`` equal slots across ``width``."""
    slot = width / max(count, 1)
    return round(index * slot, 1), slot


def chart_frame(first, last, peak, plot_width=CHART_WIDTH):
    """What every chart's SVG needs besides its marks: size, plot size, the label row and the
    first and last times of the horizontal axis."""
    return {
        "width": CHART_WIDTH, "height": CHART_HEIGHT + CHART_LABEL_HEIGHT, "plot_height": CHART_HEIGHT,
        "plot_width": plot_width, "label_y": CHART_HEIGHT + CHART_LABEL_HEIGHT - 4,
        "first": first, "last": last, "peak": peak,
    }


def finished_chart(per_minute):
    """Bar geometry for the finished-per-minute chart: a dict the template draws as SVG."""
    peak = max((count for _, count in per_minute), default=0)
    bars = []
    for index, (minute, count) in enumerate(per_minute):
        x, slot = slot_x(index, len(per_minute))
        height = scaled(count, peak)
        bars.append({"x": x, "width": round(slot * 0.8, 1), "y": round(CHART_HEIGHT - height, 1),
                     "height": height, "count": count, "minute": minute})
    return {
        **chart_frame(per_minute[0][0] if per_minute else None, per_minute[-1][0] if per_minute else None, peak),
        "bars": bars, "total": sum(count for _, count in per_minute),
    }


def outcome_chart(hours):
    """Stacked bars per hour (succeeded at the bottom, then retried, then dead) from
    ``[HourOutcomes]``, oldest first; each bar's segments carry the colour and pattern of their
    series. The chart's top is the busiest hour's total."""
    peak = max((h.succeeded + h.retried + h.dead for h in hours), default=0)
    bars = []
    for index, hour in enumerate(hours):
        x, slot = slot_x(index, len(hours))
        base, segments = CHART_HEIGHT, []
        for key, label, colour, pattern in OUTCOMES:
            count = getattr(hour, key)
            height = scaled(count, peak)
            if height:
                base = round(base - height, 1)
                segments.append({"key": key, "label": label, "colour": colour, "pattern": pattern,
                                 "y": base, "height": height, "count": count})
        bars.append({"x": x, "width": round(slot * 0.8, 1), "hour": hour.hour, "segments": segments,
                     "succeeded": hour.succeeded, "retried": hour.retried, "dead": hour.dead})
    totals = {key: sum(getattr(h, key) for h in hours) for key, *_ in OUTCOMES}
    legend = [{"key": key, "label": label, "colour": colour, "pattern": pattern, "total": totals[key]}
              for key, label, colour, pattern in OUTCOMES]
    return {**chart_frame(hours[0].hour if hours else None, hours[-1].hour if hours else None, peak),
            "bars": bars, "legend": legend, "totals": totals}


def depth_chart(depths, hours):
    """Lines of ready depth per hour for the :data:`MAX_DEPTH_LINES` deepest queues (from
    ``[QueueDepth]``, deepest first, over ``hours`` hour starts), each with its colour, dash
    pattern and its queue's name in the right margin, level with its last point. A line breaks
    over hours without a sample."""
    drawn = depths[:MAX_DEPTH_LINES]
    plot_width = CHART_WIDTH - LINE_LABEL_MARGIN
    peak = max((depth.peak for depth in drawn), default=0)
    lines = []
    for number, depth in enumerate(drawn):
        segments, current, last = [], [], None
        for index, value in enumerate(depth.peak_per_hour):
            if value is None:
                if current:
                    segments.append(current)
                current = []
                continue
            x, slot = slot_x(index, len(hours), plot_width)
            point = (round(x + slot / 2, 1), round(CHART_HEIGHT - scaled(value, peak), 1))
            current.append(point)
            last = point
        if current:
            segments.append(current)
        name = depth.queue if len(depth.queue) <= LINE_LABEL_CHARS else depth.queue[:LINE_LABEL_CHARS - 1] + "…"
        lines.append({
            "queue": depth.queue, "label": name, "colour": PALETTE[number], "dash": DASHES[number],
            "points": [" ".join(f"{x},{y}" for x, y in segment) for segment in segments],
            "dots": [segment[0] for segment in segments if len(segment) == 1],
            "label_x": plot_width + 6, "label_y": last[1] + 4 if last else CHART_HEIGHT,
            "peak": depth.peak, "ready_now": depth.ready_now, "scheduled_now": depth.scheduled_now,
        })
    _spread_labels(lines)
    return {**chart_frame(hours[0] if hours else None, hours[-1] if hours else None, peak, plot_width),
            "lines": lines, "undrawn": depths[MAX_DEPTH_LINES:]}


def _spread_labels(lines):
    """Move the lines' names apart so that no two overlap (each is LINE_LABEL_GAP high) and all
    stay inside the plot: down from the top first, then up from the bottom where they ran over."""
    ordered = sorted(lines, key=lambda line: line["label_y"])
    lowest = CHART_HEIGHT
    for number, line in enumerate(ordered):
        floor = LINE_LABEL_GAP if number == 0 else ordered[number - 1]["label_y"] + LINE_LABEL_GAP
        line["label_y"] = round(max(line["label_y"], floor), 1)
    for line in reversed(ordered):
        line["label_y"] = round(min(line["label_y"], lowest), 1)
        lowest = line["label_y"] - LINE_LABEL_GAP
    for line in lines:  # a short stretch of the line's own stroke, then its name
        line["swatch_y"], line["swatch_end_x"], line["text_x"] = line["label_y"] - 4, line["label_x"] + 14, line["label_x"] + 18
