//! Server-rendered SVG bar charts (no script, no style attribute: colours come from the
//! stylesheet's classes, which the Content-Security-Policy allows).

use std::fmt::Write as _;

use crate::html::esc;

/// One bar: its label, its value, and the text shown beside it.
pub(crate) struct Bar {
    pub label: String,
    pub value: f64,
    pub shown: String,
}

/// Vertical bars over time (days), labels under every few bars.
pub(crate) fn columns(title: &str, bars: &[Bar], class: &str) -> String {
    let width = 1000.0;
    let height = 220.0;
    let (left, bottom, top) = (8.0, 28.0, 22.0);
    let max = bars.iter().map(|b| b.value).fold(0.0_f64, f64::max);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        esc(title),
        esc(title)
    );
    let _ = write!(s, "<text x=\"{left}\" y=\"14\">{}</text>", esc(title));
    let plot_h = height - bottom - top;
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{left}\" y1=\"{y}\" x2=\"{width}\" y2=\"{y}\"/>",
        y = height - bottom
    );
    if bars.is_empty() || max <= 0.0 {
        let _ = write!(
            s,
            "<text x=\"{left}\" y=\"{}\">nothing in this range</text>",
            top + 20.0
        );
        s.push_str("</svg>");
        return s;
    }
    let step = (width - left) / bars.len() as f64;
    let bar_w = (step * 0.8).max(1.0);
    let label_every = (bars.len() / 12).max(1);
    for (i, b) in bars.iter().enumerate() {
        let h = (b.value / max * plot_h).max(if b.value > 0.0 { 1.0 } else { 0.0 });
        let x = left + i as f64 * step;
        let y = height - bottom - h;
        let _ = write!(
            s,
            "<rect class=\"bar {class}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar_w:.1}\" height=\"{h:.1}\"><title>{}: {}</title></rect>",
            esc(&b.label),
            esc(&b.shown)
        );
        if i % label_every == 0 {
            // A label that would run past the right edge ends at its bar's right side instead
            // (issue 40: the last date was cut off).
            let (at, anchor) = if x + label_width(&b.label) > width {
                (x + bar_w, "end")
            } else {
                (x, "start")
            };
            let _ = write!(
                s,
                "<text x=\"{at:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
                height - bottom + 14.0,
                esc(&b.label)
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"14\" text-anchor=\"end\">max {}</text>",
        width - 4.0,
        esc(&bars
            .iter()
            .max_by(|a, b| a.value.total_cmp(&b.value))
            .map(|b| b.shown.clone())
            .unwrap_or_default())
    );
    s.push_str("</svg>");
    s
}

/// About how wide `label` is drawn, in the chart's units: the stylesheet sets 11px text, a
/// character of which is at most about 7 units wide (digits and `-` in a system font).
fn label_width(label: &str) -> f64 {
    label.chars().count() as f64 * 7.0
}

/// Horizontal bars, one row per item (models, agents), biggest first as given.
pub(crate) fn rows(title: &str, bars: &[Bar], class: &str) -> String {
    let width = 1000.0;
    let row_h = 22.0;
    let top = 24.0;
    let label_w = 260.0;
    let value_w = 150.0;
    let height = top + row_h * bars.len().max(1) as f64 + 6.0;
    let max = bars.iter().map(|b| b.value).fold(0.0_f64, f64::max);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{}\"><title>{}</title><text x=\"0\" y=\"14\">{}</text>",
        esc(title),
        esc(title),
        esc(title)
    );
    if bars.is_empty() || max <= 0.0 {
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{}\">nothing in this range</text>",
            top + 14.0
        );
        s.push_str("</svg>");
        return s;
    }
    let plot_w = width - label_w - value_w;
    for (i, b) in bars.iter().enumerate() {
        let y = top + i as f64 * row_h;
        let w = (b.value / max * plot_w).max(if b.value > 0.0 { 1.0 } else { 0.0 });
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{:.1}\">{}</text><rect class=\"bar {class}\" x=\"{label_w}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\"><title>{}: {}</title></rect><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            y + 15.0,
            esc(&crate::html::cut(&b.label, 40)),
            row_h - 6.0,
            esc(&b.label),
            esc(&b.shown),
            label_w + w + 6.0,
            y + 15.0,
            esc(&b.shown)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_bars_scaled() {
        let bars = vec![
            Bar {
                label: "<script>".into(),
                value: 10.0,
                shown: "10".into(),
            },
            Bar {
                label: "b".into(),
                value: 5.0,
                shown: "5".into(),
            },
        ];
        let svg = rows("t", &bars, "tokens");
        assert!(svg.contains("&lt;script&gt;") && !svg.contains("<script>"));
        assert!(
            svg.contains("width=\"590.0\"") && svg.contains("width=\"295.0\""),
            "{svg}"
        );
        let svg = columns("t", &[], "tokens");
        assert!(svg.contains("nothing in this range"));
    }

    /// Issue 40: the usage chart's last date label ran past the right edge and was cut off.
    #[test]
    fn date_labels_stay_inside_the_chart() {
        let bars: Vec<Bar> = (16..=27)
            .map(|d| Bar {
                label: format!("2026-11-{d}"),
                value: d as f64,
                shown: d.to_string(),
            })
            .collect();
        let svg = columns("Tokens by day", &bars, "tokens");
        let labels: Vec<(f64, &str)> = svg
            .split("<text x=\"")
            .skip(1)
            .filter(|t| t.contains(">2026-11-"))
            .map(|t| {
                let x: f64 = t[..t.find('"').unwrap()].parse().unwrap();
                let anchor = if t.contains("text-anchor=\"end\"") {
                    "end"
                } else {
                    "start"
                };
                (x, anchor)
            })
            .collect();
        assert_eq!(labels.len(), 12, "{svg}");
        for (x, anchor) in labels {
            // Where the 70-unit label spans: [x, x + 70] or [x - 70, x].
            let (left, right) = match anchor {
                "end" => (x - label_width("2026-11-27"), x),
                _ => (x, x + label_width("2026-11-27")),
            };
            assert!(
                left >= 0.0 && right <= 1000.0,
                "a label spans {left}..{right}: {svg}"
            );
        }
    }
}
