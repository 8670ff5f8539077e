#!/usr/bin/env python3
"""Draws the audio modem's decode-rate curve as an SVG from `nearby bench audio --json` runs.

Usage: Tools/scripts/audio-curve-svg.py LABEL=results.json [LABEL=results.json ...] > curve.svg
Standard library only.
"""
import json
import sys

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 60, 20, 30, 50
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]


def main() -> None:
    runs = []
    for argument in sys.argv[1:]:
        label, _, path = argument.partition("=")
        with open(path) as handle:
            runs.append((label, json.load(handle)["curve"]))
    if not runs:
        sys.exit("usage: audio-curve-svg.py LABEL=results.json ...")
    xs = [p["cn0"] for _, curve in runs for p in curve]
    x0, x1 = min(xs), max(xs)

    def px(cn0: float) -> float:
        return LEFT + (cn0 - x0) / (x1 - x0) * (WIDTH - LEFT - RIGHT)

    def py(rate: float) -> float:
        return TOP + (1 - rate) * (HEIGHT - TOP - BOTTOM)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="18" text-anchor="middle">Audio modem: tokens decoded '
        "against C/N0 (white noise)</text>",
    ]
    for rate in [0, 0.25, 0.5, 0.75, 0.95, 0.99, 1]:
        y = py(rate)
        out.append(f'<line x1="{LEFT}" y1="{y}" x2="{WIDTH - RIGHT}" y2="{y}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4}" text-anchor="end">{rate * 100:g} %</text>')
    for cn0 in range(int(x0), int(x1) + 1):
        x = px(cn0)
        out.append(f'<line x1="{x}" y1="{TOP}" x2="{x}" y2="{HEIGHT - BOTTOM}" stroke="#eee"/>')
        out.append(f'<text x="{x}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{cn0}</text>')
    out.append(
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 12}" text-anchor="middle">C/N0 (dB-Hz)</text>'
    )
    goal = px(30)
    out.append(
        f'<line x1="{goal}" y1="{TOP}" x2="{goal}" y2="{HEIGHT - BOTTOM}" stroke="#999" '
        'stroke-dasharray="4 3"/>'
    )
    out.append(f'<text x="{goal + 4}" y="{TOP + 12}" fill="#666">goal: 99 % at 30</text>')
    for index, (label, curve) in enumerate(runs):
        color = COLORS[index % len(COLORS)]
        points = " ".join(f"{px(p['cn0']):.1f},{py(p['rate']):.1f}" for p in curve)
        out.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"/>')
        for p in curve:
            out.append(f'<circle cx="{px(p["cn0"]):.1f}" cy="{py(p["rate"]):.1f}" r="3" fill="{color}"/>')
        out.append(
            f'<text x="{LEFT + 10}" y="{TOP + 40 + 16 * index}" fill="{color}">{label}</text>'
        )
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
