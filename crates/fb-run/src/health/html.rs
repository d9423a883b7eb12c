//! The page's building blocks: escaping, figures tied to the stats
//! report (`data-stat`), charts with their tables, and the inlined
//! assets (styles, uPlot, the script that draws the charts).

use std::fmt::Write as _;

use serde_json::{json, Value};

/// uPlot 1.6.32 (MIT), vendored from the npm registry (see
/// `assets/uplot/README.md`). Its banner names its home page; the page
/// names it in words instead, so that it holds no address at all.
const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("../../assets/uplot/LICENSE");
/// Draws every chart from the page's chart data.
const DRAW_JS: &str = include_str!("../../assets/report/draw.js");
/// The page's own styles.
const STYLE_CSS: &str = include_str!("../../assets/report/style.css");

/// `s` with `& < > " '` escaped, for text and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON made safe inside a `<script>` element: no `</` to end it early.
pub fn script_json(v: &Value) -> String {
    let text = v.to_string();
    // Most reports hold no `<` at all: then no copies.
    if !text.contains('<') {
        return text;
    }
    text.replace("</", "<\\/").replace("<!--", "<\\!--")
}

/// A number as the page shows it: integers whole, others to six
/// significant digits.
pub fn show(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        // Exact in an i64, and written alike but for -0, which `{:.0}`
        // writes with its sign.
        return match x == 0.0 && x.is_sign_negative() {
            true => format!("{x:.0}"),
            false => (x as i64).to_string(),
        };
    }
    let digits = 6 - (x.abs().log10().floor() as i32 + 1);
    let text = format!("{:.*}", digits.clamp(0, 12) as usize, x);
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

/// A JSON value as the page shows it.
pub fn show_value(v: &Value) -> String {
    match v {
        Value::Number(n) => match n.as_u64() {
            Some(u) => u.to_string(),
            None => n
                .as_i64()
                .map_or_else(|| show(n.as_f64().unwrap_or(f64::NAN)), |i| i.to_string()),
        },
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The value at `path` (keys joined by `.`) of the stats report: what
/// the JSON pointer of those keys finds, walked key by key without
/// building the pointer.
pub fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').try_fold(v, child).unwrap_or(&Value::Null)
}

/// A member of an object, or an element of an array by its index written
/// as a JSON pointer writes it (no sign, no leading zero).
fn child<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => m.get(key),
        Value::Array(a) => {
            if key.starts_with('+') || (key.starts_with('0') && key.len() != 1) {
                return None;
            }
            a.get(key.parse::<usize>().ok()?)
        }
        _ => None,
    }
}

/// A figure of the stats report, in an element that names it: the CI
/// check compares `data-value` with `fb stats --json` at `data-stat`.
pub fn stat(report: &Value, path: &str) -> String {
    stat_of(path, at(report, path))
}

/// [`stat`] of `v`, the value at `path` that the caller has looked up.
pub fn stat_of(path: &str, v: &Value) -> String {
    format!(
        "<span data-stat=\"{}\" data-value=\"{}\">{}</span>",
        esc(path),
        esc(&v.to_string()),
        esc(&show_value(v))
    )
}

/// A figure the page computed from its own aggregates that must equal
/// the stats report's figure at `path` (totals of charts).
pub fn total(path: &str, value: u64) -> String {
    format!(
        "<span data-stat=\"{}\" data-value=\"{value}\">{value}</span>",
        esc(path)
    )
}

/// How a chart is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Lines over time: `x` holds window starts in seconds since 1970.
    Time,
    /// Bars over named bins: `x` holds their indices, `labels` names.
    Bars,
}

/// One series of a chart.
pub struct Series {
    /// Its name in the legend.
    pub label: String,
    /// One value per x (none where undefined).
    pub values: Vec<Option<f64>>,
    /// Its colour.
    pub color: &'static str,
    /// Drawn dashed (interval ends).
    pub dashed: bool,
}

/// A chart: its data, drawn by `draw.js`, and the same data as a table.
pub struct Chart {
    /// Element id.
    pub id: String,
    /// How it is drawn.
    pub kind: Kind,
    /// Its caption.
    pub title: String,
    /// The x values.
    pub x: Vec<f64>,
    /// Names of the x values, for the table (and the axis of bars).
    pub labels: Vec<String>,
    /// The series.
    pub series: Vec<Series>,
    /// A bin to mark (bars: the join window's), and what it means.
    pub mark: Option<(usize, String)>,
}

impl Chart {
    /// The chart's data for `draw.js`.
    pub fn json(&self) -> Value {
        json!({
            "id": self.id,
            "kind": match self.kind { Kind::Time => "time", Kind::Bars => "bars" },
            "title": self.title,
            "x": self.x,
            "labels": self.labels,
            "series": self.series.iter().map(|s| json!({
                "label": s.label, "values": s.values, "color": s.color, "dashed": s.dashed,
            })).collect::<Vec<_>>(),
            "mark": self.mark.as_ref().map(|(i, what)| json!({"at": i, "label": what})),
        })
    }

    /// The chart's place on the page, its caption, and its table in a
    /// `<details>`, open until the script has drawn the chart (so that
    /// the page reads without scripts).
    pub fn html(&self, out: &mut String) {
        let _ = write!(
            out,
            "<figure class=\"chart\"><figcaption>{}</figcaption>\
             <div class=\"plot\" id=\"{}\" aria-hidden=\"true\"></div>\
             <details class=\"data\" open><summary>Table</summary><table><thead><tr><th>{}</th>",
            esc(&self.title),
            esc(&self.id),
            match self.kind {
                Kind::Time => "window (UTC)",
                Kind::Bars => "bin",
            }
        );
        for s in &self.series {
            let _ = write!(out, "<th>{}</th>", esc(&s.label));
        }
        out.push_str("</tr></thead><tbody>");
        for (i, label) in self.labels.iter().enumerate() {
            let marked = self.mark.as_ref().is_some_and(|(m, _)| *m == i);
            let _ = write!(
                out,
                "<tr{}><td>{}</td>",
                if marked { " class=\"mark\"" } else { "" },
                esc(label)
            );
            for s in &self.series {
                let v = s.values.get(i).copied().flatten();
                let _ = write!(out, "<td>{}</td>", v.map_or("-".into(), show));
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table>");
        if let Some((_, what)) = &self.mark {
            let _ = write!(out, "<p class=\"note\">Marked row: {}.</p>", esc(what));
        }
        out.push_str("</details></figure>");
    }
}

/// A note saying what is missing where a chart would be.
pub fn missing(out: &mut String, what: &str) {
    let _ = write!(out, "<p class=\"missing\" data-missing>{}</p>", esc(what));
}

/// The page around `body`: styles, the charts' data, uPlot and the
/// script that draws them, all inline.
pub fn page(title: &str, body: &str, charts: &[Chart]) -> String {
    let data = Value::Array(charts.iter().map(Chart::json).collect());
    let uplot = UPLOT_JS.replacen(
        "/*! https://github.com/leeoniya/uPlot (v1.6.32) */",
        "/*! uPlot v1.6.32 by Leon Sorokin, MIT License (below) */",
        1,
    );
    let mut out = String::with_capacity(body.len() + UPLOT_JS.len() + 16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{}</style><style>{}</style>\
         </head><body data-charts=\"{}\">{}\
         <script type=\"application/json\" id=\"fb-charts\">{}</script>\
         <script>{}\n/*\n{}*/</script><script>{}</script></body></html>\n",
        esc(title),
        UPLOT_CSS,
        STYLE_CSS,
        charts.len(),
        body,
        script_json(&data),
        uplot,
        UPLOT_LICENSE.replace("*/", "* /"),
        DRAW_JS
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_show_six_significant_digits() {
        for (x, text) in [
            (1.5, "1.5"),
            (3.0, "3"),
            (-0.1234567, "-0.123457"),
            (1234.56789, "1234.57"),
            (0.000012345678, "0.0000123457"),
            (0.0, "0"),
            (-0.0, "-0"),
            (-3.0, "-3"),
            (999_999_999_999_999.0, "999999999999999"),
            (1e15, "1000000000000000"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(show(x), text, "{x}");
        }
    }

    /// The JSON pointer of the path's keys, as `at` once built it.
    fn by_pointer<'a>(v: &'a Value, path: &str) -> &'a Value {
        let mut pointer = String::new();
        for key in path.split('.') {
            pointer.push('/');
            pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
        }
        v.pointer(&pointer).unwrap_or(&Value::Null)
    }

    #[test]
    fn at_finds_what_the_pointer_finds() {
        let v = json!({
            "a": {"b": [10, {"c": "x"}, 12], "": 1, "d/e": 2, "f~g": 3, "0": 4},
            "n": null,
        });
        for (name, path) in [
            ("a member", "a"),
            ("nested", "a.b"),
            ("an element", "a.b.0"),
            ("in an element", "a.b.1.c"),
            ("past the end", "a.b.3"),
            ("a leading zero", "a.b.01"),
            ("a sign", "a.b.+1"),
            ("a negative index", "a.b.-1"),
            ("not a number", "a.b.x"),
            ("an empty key", "a."),
            ("a slash in a key", "a.d/e"),
            ("a tilde in a key", "a.f~g"),
            ("a digit key of an object", "a.0"),
            ("under a number", "a.b.0.c"),
            ("under null", "n.x"),
            ("missing", "z"),
            ("empty", ""),
        ] {
            assert_eq!(at(&v, path), by_pointer(&v, path), "{name}");
        }
        assert_eq!(at(&v, "a.b.1.c"), "x");
        assert!(at(&v, "a.b.3").is_null());
    }

    #[test]
    fn script_json_cannot_end_its_element() {
        let v = json!({"x": "</script><!--"});
        let s = script_json(&v);
        assert!(!s.contains("</") && !s.contains("<!--"), "{s}");
    }

    #[test]
    fn the_uplot_banner_is_replaced() {
        assert!(UPLOT_JS.starts_with("/*! https://github.com/leeoniya/uPlot (v1.6.32) */"));
        let p = page("t", "", &[]);
        assert!(!p.contains("http://") && !p.contains("https://"));
    }
}
