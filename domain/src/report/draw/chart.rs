//! The learning-curve chart as a standalone SVG document: S1 against k for each series, with
//! a band of one standard deviation where the series has a spread (humans over annotators)
//! and an error bar of each point's 95% interval over annotators (or splits).

use crate::report::machine::systems;
use crate::report::reference::Reference;
use crate::report::{Report, Tables, Which};
use crate::s1::Spread;
use crate::stats::Interval;

#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub k: u32,
    pub mean: f64,
    /// Population standard deviation; 0 draws no band.
    pub std: f64,
    pub n: usize,
    /// The 95% interval over other annotators (or splits), drawn as an error bar.
    pub ci: Option<Interval>,
}

impl Point {
    /// The point of scenario `k` from its scores' spread, with its interval where it has one.
    fn of(k: u32, s: &Spread, ci: Option<Interval>) -> Point {
        Point {
            k,
            mean: s.mean,
            std: s.std_pop,
            n: s.n,
            ci,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: String,
    pub points: Vec<Point>,
    /// A reference answer: a dashed line without a band.
    pub dashed: bool,
}

/// The human series of a task from a report's main table (official scoring).
pub fn human_series(t: &Tables, task: &str, name: &str) -> Series {
    let mut points: Vec<Point> = t
        .main
        .iter()
        .filter(|c| c.task == task)
        .map(|c| Point::of(c.k, &c.official, c.official_ci.and_then(|u| u.other_units)))
        .collect();
    points.sort_by_key(|p| p.k);
    Series {
        name: name.to_string(),
        color: "#1f5fa8".into(),
        points,
        dashed: false,
    }
}

/// A task's learning curve for one set of annotators.
pub fn task_curve(r: &Report, task: &str, which: Which) -> String {
    let machines = machine_series(r, task);
    let title = if machines.is_empty() {
        format!("{task}: human S1 against shots ({})", which.describe())
    } else {
        format!(
            "{task}: human and machine S1 against shots (humans: {})",
            which.describe()
        )
    };
    learning_curve(
        &title,
        &std::iter::once(human_series(which.of(r), task, "humans"))
            .chain(machines)
            .chain(reference_series(r, task))
            .collect::<Vec<_>>(),
    )
}

pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const W: f64 = 560.0;
const H: f64 = 320.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 48.0;

/// The chart's x and y pixel positions of a point.
pub fn position(k: u32, s1: f64, max_k: u32) -> (f64, f64) {
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let x = LEFT + plot_w * f64::from(k) / f64::from(max_k.max(1));
    let y = TOP + plot_h * (1.0 - s1.clamp(0.0, 1.0));
    (x, y)
}

fn pt(p: (f64, f64)) -> String {
    format!("{:.1},{:.1}", p.0, p.1)
}

/// S1 (0–100 %) against shots k, one line per series, ticks at every k of any series.
pub fn learning_curve(title: &str, series: &[Series]) -> String {
    let mut ks: Vec<u32> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.k))
        .collect();
    ks.sort_unstable();
    ks.dedup();
    let max_k = ks.last().copied().unwrap_or(1);
    let w = width_for(series);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{H}\" viewBox=\"0 0 {w} {H}\" role=\"img\" aria-label=\"{t}\" font-family=\"sans-serif\" font-size=\"12\">\n<title>{t}</title>\n<rect width=\"{w}\" height=\"{H}\" fill=\"#ffffff\"/>\n<text x=\"{LEFT}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{t}</text>\n",
        t = xml_escape(title)
    );
    let (x0, y0) = position(0, 0.0, max_k);
    let (x1, y1) = position(max_k, 1.0, max_k);
    svg.push_str(&axes(&ks, max_k));
    for (i, s) in series.iter().enumerate() {
        svg.push_str(&series_svg(s, i, max_k));
    }
    if series.iter().all(|s| s.points.is_empty()) {
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#666666\">no finished annotators yet</text>\n",
            (x0 + x1) / 2.0,
            (y0 + y1) / 2.0
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

/// How wide the document must be for its longest legend entry to show whole (at most about
/// 7 px a character at 12 px sans-serif, after the swatch); never narrower than `W`, and the
/// plot keeps its size.
fn width_for(series: &[Series]) -> f64 {
    let longest = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    (W - RIGHT + 38.0 + 7.0 * longest as f64 + 10.0)
        .max(W)
        .ceil()
}

/// The grid, the axes and their labels of a chart whose largest k is `max_k`.
fn axes(ks: &[u32], max_k: u32) -> String {
    let mut svg = String::new();
    let (x0, y0) = position(0, 0.0, max_k);
    let (x1, y1) = position(max_k, 1.0, max_k);
    for i in 0..=5 {
        let v = f64::from(i) / 5.0;
        let (_, y) = position(0, v, max_k);
        svg.push_str(&format!(
            "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            x0 - 6.0,
            y + 4.0,
            i * 20
        ));
    }
    for &k in ks {
        let (x, _) = position(k, 0.0, max_k);
        svg.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#444444\"/>\n<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{k}</text>\n",
            y0 + 5.0,
            y0 + 18.0
        ));
    }
    svg.push_str(&format!(
        "<line x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{x1:.1}\" y2=\"{y0:.1}\" stroke=\"#444444\"/>\n<line x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{x0:.1}\" y2=\"{y1:.1}\" stroke=\"#444444\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">shots (k)</text>\n<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">S1 (%)</text>\n",
        (x0 + x1) / 2.0,
        H - 10.0,
        (y0 + y1) / 2.0
    ));
    svg
}

/// One series (the `i`th): its band of one standard deviation, its mean line, error bars of
/// its intervals, its points and its legend entry.
fn series_svg(s: &Series, i: usize, max_k: u32) -> String {
    let mut svg = String::new();
    let color = xml_escape(&s.color);
    let name = xml_escape(&s.name);
    svg.push_str(&format!("<g class=\"series\" data-name=\"{name}\">\n"));
    let dash = if s.dashed {
        " stroke-dasharray=\"6 4\""
    } else {
        ""
    };
    if !s.dashed && s.points.iter().any(|p| p.std > 0.0) {
        let upper = s
            .points
            .iter()
            .map(|p| pt(position(p.k, p.mean + p.std, max_k)));
        let lower = s
            .points
            .iter()
            .rev()
            .map(|p| pt(position(p.k, p.mean - p.std, max_k)));
        let band: Vec<String> = upper.chain(lower).collect();
        svg.push_str(&format!(
            "<polygon class=\"band\" points=\"{}\" fill=\"{color}\" fill-opacity=\"0.18\" stroke=\"none\"/>\n",
            band.join(" ")
        ));
    }
    let line: Vec<String> = s
        .points
        .iter()
        .map(|p| pt(position(p.k, p.mean, max_k)))
        .collect();
    svg.push_str(&format!(
        "<polyline class=\"mean\" points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\n",
        line.join(" ")
    ));
    for (p, ci) in s.points.iter().filter_map(|p| Some((p, p.ci?))) {
        let (x, lo) = position(p.k, ci.low, max_k);
        let (_, hi) = position(p.k, ci.high, max_k);
        svg.push_str(&format!(
            "<path class=\"error-bar\" d=\"M{x:.1},{lo:.1}V{hi:.1}M{:.1},{lo:.1}H{:.1}M{:.1},{hi:.1}H{:.1}\" stroke=\"{color}\" stroke-width=\"1.2\" fill=\"none\"><title>{name}, k={}: 95% interval {:.1}–{:.1}</title></path>\n",
            x - 4.0,
            x + 4.0,
            x - 4.0,
            x + 4.0,
            p.k,
            100.0 * ci.low,
            100.0 * ci.high
        ));
    }
    for p in &s.points {
        let (x, y) = position(p.k, p.mean, max_k);
        svg.push_str(&format!(
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{color}\"><title>{name}, k={}: {:.1} ± {:.1} (n={})</title></circle>\n",
            p.k,
            100.0 * p.mean,
            100.0 * p.std,
            p.n
        ));
    }
    let ly = TOP + 8.0 + 20.0 * i as f64;
    let lx = W - RIGHT + 14.0;
    svg.push_str(&format!(
        "<line x1=\"{lx:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\n<text x=\"{:.1}\" y=\"{:.1}\">{name}</text>\n</g>\n",
        lx + 18.0,
        lx + 24.0,
        ly + 4.0
    ));
    svg
}

const COLORS: [&str; 6] = [
    "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#16a085", "#7f8c8d",
];

/// One line per system on a task's learning curve (official scoring).
pub fn machine_series(r: &Report, task: &str) -> Vec<Series> {
    systems(r)
        .into_iter()
        .enumerate()
        .filter_map(|(i, system)| {
            let points: Vec<Point> = r
                .machines
                .iter()
                .filter(|m| m.system == system && m.task == task)
                .map(|m| Point::of(m.k, &m.official, m.official_ci.and_then(|u| u.other_units)))
                .collect();
            (!points.is_empty()).then(|| Series {
                name: system,
                color: COLORS[i % COLORS.len()].into(),
                points,
                dashed: false,
            })
        })
        .collect()
}

/// One dashed grey line per reference answer on a task's learning curve (official scoring).
pub fn reference_series(r: &Report, task: &str) -> Vec<Series> {
    Reference::ALL
        .into_iter()
        .zip(["#555555", "#999999", "#999999", "#999999"])
        .filter_map(|(reference, color)| {
            let mut points: Vec<Point> = r
                .references
                .iter()
                .filter(|m| m.system == reference.name() && m.task == task)
                .map(|m| Point::of(m.k, &m.official, None))
                .collect();
            points.sort_by_key(|p| p.k);
            (!points.is_empty()).then(|| Series {
                name: reference.name().to_string(),
                color: color.into(),
                points,
                dashed: true,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_land_where_the_scale_says() {
        let s = Series {
            name: "humans <all>".into(),
            color: "#123456".into(),
            points: vec![
                Point {
                    k: 0,
                    mean: 0.5,
                    std: 0.1,
                    n: 3,
                    ci: Some(Interval {
                        low: 0.25,
                        high: 0.75,
                    }),
                },
                Point {
                    k: 30,
                    mean: 1.0,
                    std: 0.0,
                    n: 3,
                    ci: None,
                },
            ],
            dashed: false,
        };
        let svg = learning_curve("SST-2 & co", &[s]);
        // Plot area: x 56..410, y 40..272; k=0 -> x 56, S1 0.5 -> y 156; k=30 -> x 410, S1 1 -> y 40.
        assert!(svg.contains("points=\"56.0,156.0 410.0,40.0\""), "{svg}");
        // Band: mean ± std forward then backward: 0.6 -> y 132.8, 0.4 -> y 179.2.
        assert!(
            svg.contains("points=\"56.0,132.8 410.0,40.0 410.0,40.0 56.0,179.2\""),
            "{svg}"
        );
        // The k=0 error bar: 0.75 -> y 98, 0.25 -> y 214; none at k=30 (no interval).
        assert!(
            svg.contains("d=\"M56.0,214.0V98.0M52.0,214.0H60.0M52.0,98.0H60.0\""),
            "{svg}"
        );
        assert_eq!(svg.matches("class=\"error-bar\"").count(), 1);
        assert!(svg.contains("<title>SST-2 &amp; co</title>"));
        assert!(svg.contains("humans &lt;all&gt;, k=0: 50.0 ± 10.0 (n=3)"));
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn an_empty_chart_says_so() {
        assert!(learning_curve("x", &[]).contains("no finished annotators yet"));
    }
}
