"""The views: number formatting, Jinja2 templates (``templates/``), the chart kit and every SVG
chart, a figure's tables and panels, claims and comparisons as HTML. They read the model; they
import ``model`` and ``core``, never ``pages`` or ``build``."""
